/** What every workflow start of the orchestrator shares: fairness, search attributes, tolerated errors. */
import { CompanyIdKey, IssueIdKey, KindKey, StateKey } from '../domain/search-attributes';
import { companyPriority, priorityDetails, type TaskPriorityKind } from '../domain/task-priority';

/** A company's workflow in the shared queue: its fairness key and priority, and the UI's line that says so. */
export const fairly = (companyId: string, kind: TaskPriorityKind) => ({
  priority: companyPriority(companyId, kind),
  staticDetails: priorityDetails(companyId, kind),
});

export const attributes = (kind: string, companyId: string, issueId: string, state: string) => [
  { key: KindKey, value: kind },
  { key: CompanyIdKey, value: companyId },
  { key: IssueIdKey, value: issueId },
  { key: StateKey, value: state },
];

/** A catch handler that swallows the given error types (a duplicate start, an ended workflow), rethrowing others. */
export const ignore =
  (...types: (new (...args: never[]) => Error)[]) =>
  (error: unknown) => {
    if (!types.some((t) => error instanceof t)) throw error;
  };
