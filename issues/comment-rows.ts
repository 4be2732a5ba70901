/**
 * A comment's row. A person's comment while the issue's `acp` run is live is also a message to that agent (issue 46):
 * queued for the run (`messageForRunId`) until a run of the issue takes it (runs/acp-messages.ts).
 */
import type { Tx } from '../db/prisma';
import type { ScopedActor } from '../domain/actor';
import { adapterOf } from '../domain/adapter';

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

/** The issue's live run of an `acp` agent, if any (at most one run of an issue is live). */
async function liveAcpRunOf(tx: Tx, issueId: string): Promise<string | null> {
  const live = await tx.run.findFirst({
    where: { issueId, status: { in: ['queued', 'running'] } },
    select: { id: true, agent: { select: { adapter: true } } },
    orderBy: { createdAt: 'desc' },
  });
  return live && adapterOf(live.agent.adapter)?.type === 'acp' ? live.id : null;
}
