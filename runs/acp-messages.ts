/**
 * Messages to an `acp` run's agent (issue 46): a person's comment posted while the acp run was live is queued
 * (`Comment.messageForRunId`, issues/issues.ts). A running run of that issue claims the queued ones, oldest first, when
 * its turn ends (acp/messages.ts sends them as the next prompt of its session); a continuation claims what its
 * interrupted run left. One statement claims and marks them delivered, skipping rows another claim holds: each
 * message goes to one run, once.
 */
import { claimingRun } from './acp-sessions';
import type { Deps } from '../runtime/deps';

export interface ClaimedMessage {
  id: string;
  body: string;
  createdAt: Date;
}

export async function claimAcpMessages(deps: Deps, runId: string): Promise<ClaimedMessage[]> {
  const run = await claimingRun(deps.db, runId, "takes its issue's messages");
  const claimed = await deps.db.$queryRaw<ClaimedMessage[]>`
    UPDATE "Comment" SET "deliveredToRunId" = ${runId}::uuid, "deliveredAt" = now()
    WHERE id IN (
      SELECT id FROM "Comment"
      WHERE "issueId" = ${run.issueId}::uuid AND "messageForRunId" IS NOT NULL AND "deliveredAt" IS NULL
      ORDER BY "createdAt", id
      FOR UPDATE SKIP LOCKED)
    RETURNING id, body, "createdAt"`;
  return claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
}
