/** Custom search attributes every treewarden workflow carries; registered on the dev server and on clusters. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
export const CompanyIdKey = defineSearchAttributeKey('TreewardenCompanyId', SearchAttributeType.KEYWORD);
export const IssueIdKey = defineSearchAttributeKey('TreewardenIssueId', SearchAttributeType.KEYWORD);
export const KindKey = defineSearchAttributeKey('TreewardenKind', SearchAttributeType.KEYWORD);
export const StateKey = defineSearchAttributeKey('TreewardenState', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTE_TYPES = {
  TreewardenCompanyId: 'Keyword',
  TreewardenIssueId: 'Keyword',
  TreewardenKind: 'Keyword',
  TreewardenState: 'Keyword',
} as const;
