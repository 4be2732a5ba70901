/** Board and run tokens as stored (only their hashes): the actor a bearer secret stands for. */
import type { Actor } from '../domain/actor';
import { reviewScope } from '../domain/review-authority';
import { AppError } from '../domain/errors';
import { isTerminalRunStatus, type RunStatus } from '../domain/statuses';
import { hashToken } from '../domain/tokens';
import type { Deps } from '../runtime/deps';

/** A run's calls are written down as its sign of life at most this often (and never more often than it is graded). */
const SIGN_OF_LIFE_EVERY_MS = 5_000;

/** The token and its run as they are now: one statement (issue 26, item 5). */
interface TokenRow {
  kind: 'admin' | 'board' | 'run';
  companyId: string | null;
  agentId: string | null;
  runId: string | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
  runStatus: RunStatus | null;
  runIssueId: string | null;
  runAgentId: string | null;
  lastApiActivityAt: Date | null;
  reviewFingerprint: string | null;
  reviewWatchdogId: string | null;
  selfReview: boolean | null;
}

const readToken = (deps: Deps, tokenHash: string) =>
  deps.db.$queryRaw<TokenRow[]>`
    SELECT t.kind::text AS kind, t."companyId"::text AS "companyId", t."agentId"::text AS "agentId",
      t."runId"::text AS "runId", t."revokedAt", t."expiresAt",
      r.status::text AS "runStatus", r."issueId"::text AS "runIssueId", r."agentId"::text AS "runAgentId",
      r."lastApiActivityAt", r."reviewFingerprint", r."reviewWatchdogId"::text AS "reviewWatchdogId",
      r."selfReview"
    FROM "ApiToken" t LEFT JOIN "Run" r ON r.id = t."runId"
    WHERE t."tokenHash" = ${tokenHash}`;

/**
 * The actor of a board or run token; a run's call is a sign of life for the silent-run watchdog, unless its route
 * says otherwise (`signOfLife`: a supervisor's poll proves the supervisor lives, not that its agent works).
 */
export async function actorOfToken(deps: Deps, secret: string, signOfLife = true): Promise<Actor> {
  const [token] = await readToken(deps, hashToken(secret));
  if (!token || token.revokedAt) throw new AppError('unauthorized', 'invalid or revoked token');
  if (token.expiresAt && token.expiresAt.getTime() <= Date.now())
    throw new AppError('unauthorized', 'session expired: sign in again');
  if (token.kind === 'board' && token.companyId) return { kind: 'board', companyId: token.companyId };
  if (token.kind === 'run' && token.runId && token.companyId && token.agentId) {
    if (!token.runStatus || !token.runIssueId || !token.runAgentId || isTerminalRunStatus(token.runStatus))
      throw new AppError('unauthorized', 'run token expired: its run has ended');
    if (signOfLife) await noteSignOfLife(deps, token.runId, token.lastApiActivityAt);
    const run = { agentId: token.runAgentId, issueId: token.runIssueId, selfReview: token.selfReview === true };
    const { reviewFingerprint, reviewWatchdogId } = token;
    // a review run's watchdog as it stands now; the one statement more is only ever a review run's
    const watchdog = reviewWatchdogId
      ? await deps.db.watchdog.findUnique({
          where: { id: reviewWatchdogId },
          select: {
            id: true,
            issueId: true,
            agentId: true,
            mode: true,
            status: true,
            reviewIssueId: true,
            incompleteIssueIds: true,
          },
        })
      : null;
    return {
      kind: 'run',
      companyId: token.companyId,
      agentId: token.agentId,
      runId: token.runId,
      issueId: token.runIssueId,
      // authority from the server's rows only: the watchdog that woke the run, as it stands now
      watchdog:
        reviewFingerprint === null ? null : reviewScope({ ...run, reviewFingerprint }, reviewWatchdogId, watchdog),
    };
  }
  throw new AppError('unauthorized', 'invalid token');
}

/** Written when the last one is older than the silence grading could tell apart, so most calls write nothing. */
async function noteSignOfLife(deps: Deps, runId: string, last: Date | null): Promise<void> {
  const everyMs = Math.min(SIGN_OF_LIFE_EVERY_MS, deps.config.TREEWARDEN_SUPERVISE_EVERY_MS);
  if (last && Date.now() - last.getTime() < everyMs) return;
  await deps.db.run.update({ where: { id: runId }, data: { lastApiActivityAt: new Date() } });
}
