/**
 * A comment's row. A person's comment while the issue's `acp` run is live is also a message to that agent (issue 46):
 * queued for the run (`messageForRunId`) until a run of the issue takes it (runs/acp-messages.ts).
 */
import type { Tx } from '../db/prisma';
import type { ScopedActor } from '../domain/actor';
import { adapterOf } from '../domain/adapter';
import { LIVE_RUN_STATUSES } from '../domain/statuses';

export async function insertComment(tx: Tx, actor: ScopedActor, issueId: string, body: string) {
  return tx.comment.create({
    data: {
      companyId: actor.companyId,
      issueId,
      body,
      authorKind: actor.kind,
      authorAgentId: actor.kind === 'run' ? actor.agentId : null,
      runId: actor.kind === 'run' ? actor.runId : null,
      // a person's comment while the issue's acp run is live is a message to that agent (issue 46)
      messageForRunId: actor.kind === 'board' ? await liveAcpRunOf(tx, issueId) : null,
    },
  });
}

/**
 * The issue's live run of an `acp` agent that still takes messages, if any (at most one run of an issue is live; a
 * run whose retry is scheduled takes them when it runs again). The run's row is read FOR SHARE: a supervisor's last
 * claim (FOR UPDATE) waits for this comment and takes it, or went first and closed the run to messages.
 */
async function liveAcpRunOf(tx: Tx, issueId: string): Promise<string | null> {
  const [live] = await tx.$queryRaw<{ id: string; adapter: unknown }[]>`
    SELECT r.id::text AS id, a.adapter FROM "Run" r JOIN "Agent" a ON a.id = r."agentId"
    WHERE r."issueId" = ${issueId}::uuid AND r.status::text = ANY(${LIVE_RUN_STATUSES}::text[])
      AND r."acpMessagesClosedAt" IS NULL
    ORDER BY r."createdAt" DESC LIMIT 1
    FOR SHARE OF r`;
  return live && adapterOf(live.adapter)?.type === 'acp' ? live.id : null;
}
