/**
 * The ACP session ledger's write (issue 46): an `acp` run's supervisor claims its session before the first prompt,
 * with its run token. Who claims comes from the server's rows (the run, its agent and company), never from the body;
 * the rule is domain/acp-session.ts. Two claims of one session serialize on its row's lock.
 */
import type { Db, Tx } from '../db/prisma';
import { AppError } from '../domain/errors';
import { decideSessionClaim, type AcpSessionOrigin } from '../domain/acp-session';
import type { Deps } from '../runtime/deps';

export interface AcpSessionClaim {
  sessionId: string;
  /** what the supervisor bound it to: the workspace's real path, the agent's command line, the host */
  cwd: string;
  command: string[];
  host: string;
  origin: AcpSessionOrigin;
}

/** The run that claims (its session, its issue's messages): only a running run does. */
export async function claimingRun(db: Db | Tx, runId: string, what: string) {
  const run = await db.run.findUniqueOrThrow({
    where: { id: runId },
    select: { status: true, agentId: true, companyId: true, issueId: true },
  });
  if (run.status !== 'running')
    throw new AppError('conflict', `run ${runId} is ${run.status}: only a running run ${what}`);
  return run;
}

export async function claimAcpSession(deps: Deps, runId: string, claim: AcpSessionClaim) {
  return deps.db.$transaction(async (tx) => {
    const run = await claimingRun(tx, runId, 'claims an ACP session');
    const command = JSON.stringify(claim.command);
    // the row first (unclaimed: no claims yet), so that two first claims of a session wait on one lock
    await tx.$executeRaw`
      INSERT INTO "AcpSession" (id, "companyId", "agentId", "sessionId", cwd, command, host, "runId", claims)
      VALUES (gen_random_uuid(), ${run.companyId}::uuid, ${run.agentId}::uuid, ${claim.sessionId}, ${claim.cwd},
              ${command}::jsonb, ${claim.host}, ${runId}::uuid, 0)
      ON CONFLICT ("agentId", "sessionId") DO NOTHING`;
    const [row] = await tx.$queryRaw<{ id: string; runId: string; claims: number }[]>`
      SELECT id, "runId", claims FROM "AcpSession"
      WHERE "agentId" = ${run.agentId}::uuid AND "sessionId" = ${claim.sessionId} FOR UPDATE`;
    const holderStatus =
      row.claims === 0
        ? null
        : ((await tx.run.findUnique({ where: { id: row.runId }, select: { status: true } }))?.status ?? null);
    const decision = decideSessionClaim(row.claims === 0 ? null : { runId: row.runId, status: holderStatus }, runId);
    if (decision.kind === 'in_use')
      throw new AppError('conflict', `ACP session ${claim.sessionId} is in use by live run ${decision.runId}`, {
        reason: 'session_in_use',
        runId: decision.runId,
      });
    const again = row.claims > 0 && row.runId === runId;
    const claimed = await tx.acpSession.update({
      where: { id: row.id },
      data: {
        runId,
        cwd: claim.cwd,
        command: claim.command,
        host: claim.host,
        claims: again ? row.claims : row.claims + 1,
        claimedAt: new Date(),
      },
    });
    await tx.run.update({
      where: { id: runId },
      data: { acpSessionId: claim.sessionId, acpSessionOrigin: claim.origin },
    });
    return {
      sessionId: claimed.sessionId,
      runId,
      origin: claim.origin,
      claims: claimed.claims,
      claimedAt: claimed.claimedAt,
    };
  });
}
