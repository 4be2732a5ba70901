/**
 * Messages to an `acp` run's agent (issue 46): a person's comment posted while the issue's acp run was live is queued
 * (`Comment.messageForRunId`, issues/comment-rows.ts). A running run of that issue claims the queued ones, oldest
 * first (acp/messages.ts sends them as the next prompt of its session); a continuation claims what its interrupted
 * run left. One statement claims and marks them delivered, skipping rows another claim holds: each message goes to
 * one run, once. A claim marked `last` that finds none closes the run to messages under the run's row lock, which a
 * comment's insert shares: a comment either is queued before it (and taken) or, after it, is no message to the run.
 */
import { claimingRun } from './acp-sessions';
import type { Deps } from '../runtime/deps';

export interface ClaimedMessage {
  id: string;
  body: string;
  createdAt: Date;
}

export async function claimAcpMessages(deps: Deps, runId: string, last = false): Promise<ClaimedMessage[]> {
  return deps.db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT 1 FROM "Run" WHERE id = ${runId}::uuid FOR UPDATE`;
    const run = await claimingRun(tx, runId, "takes its issue's messages");
    const claimed = await tx.$queryRaw<ClaimedMessage[]>`
      UPDATE "Comment" SET "deliveredToRunId" = ${runId}::uuid, "deliveredAt" = now()
      WHERE id IN (
        SELECT id FROM "Comment"
        WHERE "issueId" = ${run.issueId}::uuid AND "messageForRunId" IS NOT NULL AND "deliveredAt" IS NULL
        ORDER BY "createdAt", id
        FOR UPDATE SKIP LOCKED)
      RETURNING id, body, "createdAt"`;
    if (last && claimed.length === 0)
      await tx.run.update({ where: { id: runId }, data: { acpMessagesClosedAt: new Date() } });
    return claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  });
}

/**
 * Messages a run claimed and never prompted (a stop came while its claim was answered: no prompt goes out once a
 * stop is in) go back to the issue's queue, for its continuation or next run. Only the run's own claims.
 */
export async function returnAcpMessages(deps: Deps, runId: string, ids: string[]): Promise<number> {
  await claimingRun(deps.db, runId, "returns its issue's messages");
  const { count } = await deps.db.comment.updateMany({
    where: { id: { in: ids }, deliveredToRunId: runId },
    data: { deliveredToRunId: null, deliveredAt: null },
  });
  return count;
}

/** How many messages are queued for the run's issue: a supervisor's poll while a turn is under way. */
export async function queuedAcpMessages(deps: Deps, runId: string): Promise<number> {
  const run = await claimingRun(deps.db, runId, "reads its issue's messages");
  return deps.db.comment.count({
    where: { issueId: run.issueId, messageForRunId: { not: null }, deliveredAt: null },
  });
}
