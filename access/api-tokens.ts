/** Board and run tokens as stored (only their hashes): the actor a bearer secret stands for. */
import type { Actor } from '../domain/actor';
import { reviewScope } from '../domain/review-authority';
import { AppError } from '../domain/errors';
import { isTerminalRunStatus } from '../domain/statuses';
import { hashToken } from '../domain/tokens';
import type { Deps } from '../runtime/deps';

/** The actor of a board or run token; a run's call is a sign of life for the silent-run watchdog. */
export async function actorOfToken(deps: Deps, secret: string): Promise<Actor> {
  const token = await deps.db.apiToken.findUnique({ where: { tokenHash: hashToken(secret) } });
  if (!token || token.revokedAt) throw new AppError('unauthorized', 'invalid or revoked token');
  if (token.expiresAt && token.expiresAt.getTime() <= Date.now())
    throw new AppError('unauthorized', 'session expired: sign in again');
  if (token.kind === 'board' && token.companyId) return { kind: 'board', companyId: token.companyId };
  if (token.kind === 'run' && token.runId && token.companyId && token.agentId) {
    const run = await deps.db.run.findUnique({ where: { id: token.runId }, include: { reviewWatchdog: true } });
    if (!run || isTerminalRunStatus(run.status))
      throw new AppError('unauthorized', 'run token expired: its run has ended');
    // an API call made with the run's token is a sign of life for the silent-run watchdog
    await deps.db.run.update({ where: { id: run.id }, data: { lastApiActivityAt: new Date() } });
    const { reviewFingerprint } = run;
    return {
      kind: 'run',
      companyId: token.companyId,
      agentId: token.agentId,
      runId: run.id,
      issueId: run.issueId,
      // authority from the server's rows only: the watchdog that woke the run, as it stands now
      watchdog:
        reviewFingerprint === null
          ? null
          : reviewScope({ ...run, reviewFingerprint }, run.reviewWatchdogId, run.reviewWatchdog),
    };
  }
  throw new AppError('unauthorized', 'invalid token');
}
