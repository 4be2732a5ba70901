/**
 * Every parked state names its exit (issue 29, item 4; Paperclip #13718, #11051): an issue enters `blocked` only
 * with something that unblocks it, and a watchdog review is told, per blocked leaf, what that is and whether it is
 * already resolved.
 */
import { AppError } from './errors';
import { TERMINAL_ISSUE_STATUSES } from './statuses';

/** What can unblock an issue, as it will stand once the write that blocks it commits. */
export interface BlockedExits {
  blockerIssueIds: readonly string[];
  pendingInteractionIds: readonly string[];
  executionBlockerIds: readonly string[];
  blockedReason: string | null;
}

/** The exits a `blocked` issue may name, in the words of the 422 that lists them. */
export const BLOCKED_EXIT_KINDS = [
  'a blocking issue (blockedByIssueIds)',
  'an open interaction',
  'an active execution blocker',
  'a blockedReason naming who or what unblocks it',
] as const;

/** A 422 naming the missing exit, or null when the issue may be blocked (`issueId` null: one being created). */
export function blockedWithoutExit(issueId: string | null, exits: BlockedExits): AppError | null {
  const named =
    exits.blockerIssueIds.length > 0 ||
    exits.pendingInteractionIds.length > 0 ||
    exits.executionBlockerIds.length > 0 ||
    (exits.blockedReason?.trim() ?? '') !== '';
  if (named) return null;
  const which = issueId ? `issue ${issueId}` : 'an issue';
  return new AppError(
    'unprocessable',
    `${which} cannot be blocked without an exit: name ${BLOCKED_EXIT_KINDS.join(', or ')}`,
    { issueId, missing: 'exit', exits: BLOCKED_EXIT_KINDS },
  );
}

/** A reason is the exit of a blocked issue: given for any other status it would be a claim nothing reads. */
export function reasonWithoutBlock(status: string, blockedReason: string | null | undefined): AppError | null {
  if (status === 'blocked' || blockedReason === null || blockedReason === undefined) return null;
  return new AppError(
    'unprocessable',
    `blockedReason is the exit of a blocked issue, and this one would be ${status}`,
    {
      status,
    },
  );
}

/** A blocked leaf as a review run is told it: each exit it names, and whether none of them still holds it. */
export interface BlockedLeafExit {
  id: string;
  blockingIssues: { id: string; status: string; resolved: boolean }[];
  pendingInteractionIds: readonly string[];
  executionBlockerIds: readonly string[];
  blockedReason: string | null;
  /**
   * True when nothing holds the leaf any more: every blocking issue it names is done or cancelled and no
   * interaction or execution blocker is open, or it names no exit at all now (its interaction answered, its
   * execution blocker resolved, no reason). A reason beside blocking issues describes them; alone it stands
   * until someone acts on it.
   */
  exitResolved: boolean;
}

export function describeBlockedLeaf(
  leaf: { id: string; pendingInteractionIds: readonly string[]; executionBlockerIds: readonly string[] },
  blockingIssues: { id: string; status: string }[],
  blockedReason: string | null,
): BlockedLeafExit {
  const issues = blockingIssues
    .map((b) => ({ ...b, resolved: (TERMINAL_ISSUE_STATUSES as readonly string[]).includes(b.status) }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const openWait = leaf.pendingInteractionIds.length > 0 || leaf.executionBlockerIds.length > 0;
  const exitResolved =
    !openWait && (issues.length > 0 ? issues.every((b) => b.resolved) : (blockedReason?.trim() ?? '') === '');
  return {
    id: leaf.id,
    blockingIssues: issues,
    pendingInteractionIds: leaf.pendingInteractionIds,
    executionBlockerIds: leaf.executionBlockerIds,
    blockedReason,
    exitResolved,
  };
}
