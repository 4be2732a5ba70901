/**
 * Entering `blocked` names an exit (issue 29, item 4): checked as the write would leave the issue, before anything
 * is written.
 */
import type { Tx } from '../db/prisma';
import { blockedWithoutExit, reasonWithoutBlock } from '../domain/blocked-exit';

/** The blocked-state fields a create or update would leave on the issue. */
interface PlannedBlock {
  /** null for an issue being created (it has no interactions or execution blockers yet) */
  issueId: string | null;
  status: string;
  /** true when the write moves the issue into `blocked` (a write that leaves it there is not re-checked) */
  entersBlocked: boolean;
  blockerIssueIds: readonly string[];
  blockedReason: string | null;
}

async function assertBlockedExit(tx: Tx, planned: PlannedBlock): Promise<void> {
  const misplaced = reasonWithoutBlock(planned.status, planned.blockedReason);
  if (misplaced) throw misplaced;
  if (!planned.entersBlocked) return;
  const { issueId } = planned;
  const [interactions, executionBlockers] = issueId
    ? await Promise.all([
        tx.interaction.findMany({ where: { issueId, status: 'pending' }, select: { id: true } }),
        tx.executionBlocker.findMany({ where: { issueId, status: 'active' }, select: { id: true } }),
      ])
    : [[], []];
  const refusal = blockedWithoutExit(issueId, {
    blockerIssueIds: planned.blockerIssueIds,
    pendingInteractionIds: interactions.map((i) => i.id),
    executionBlockerIds: executionBlockers.map((b) => b.id),
    blockedReason: planned.blockedReason,
  });
  if (refusal) throw refusal;
}

/** The reason a new issue is stored with, once its exit is checked (a new issue has no other exit). */
export async function blockedReasonOnCreate(tx: Tx, status: string, blockedReason: string | null | undefined) {
  const reason = blockedReason ?? null;
  await assertBlockedExit(tx, {
    issueId: null,
    status,
    entersBlocked: status === 'blocked',
    blockerIssueIds: [],
    blockedReason: reason,
  });
  return reason;
}

/** The reason an update leaves on the issue, once its exit is checked: leaving `blocked` clears it. */
export async function blockedReasonOnUpdate(
  tx: Tx,
  issue: { id: string; status: string; blockedReason: string | null; blockedBy: { blockerIssueId: string }[] },
  input: { status?: string; blockedByIssueIds?: string[]; blockedReason?: string | null },
): Promise<string | null> {
  const status = input.status ?? issue.status;
  const kept = status === 'blocked' && input.blockedReason === undefined;
  const blockedReason = (kept ? issue.blockedReason : input.blockedReason) ?? null;
  await assertBlockedExit(tx, {
    issueId: issue.id,
    status,
    entersBlocked: status === 'blocked' && issue.status !== 'blocked',
    blockerIssueIds: input.blockedByIssueIds ?? issue.blockedBy.map((b) => b.blockerIssueId),
    blockedReason,
  });
  return status === 'blocked' ? blockedReason : null;
}
