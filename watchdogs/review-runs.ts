/**
 * A watchdog's review runs once the watchdog is removed or reconfigured (issue 24). Their tokens lose every right at
 * once, because each request re-reads the watchdog (domain/review-authority.ts); this also stops them, verified like
 * any stop, and cancels review wakes not yet dispatched, so no agent goes on working for authority it lost. Which
 * ones are revoked is the same rule the tokens apply, so the two can never disagree.
 */
import { watchdogMayAct } from '../domain/watchdog';
import type { Actor } from '../domain/actor';
import { revocationOf } from '../domain/review-authority';
import { LIVE_RUN_STATUSES } from '../domain/statuses';
import type { Deps } from '../runtime/deps';
import { requestStop } from '../runs/runs';

/** What revocationOf reads of a review run or wake. */
interface ReviewRow {
  agentId: string;
  issueId: string;
  reviewFingerprint: string | null;
  selfReview: boolean;
}
const reviewFacts = { id: true, agentId: true, issueId: true, reviewFingerprint: true, selfReview: true } as const;

/** Stops the live review runs (and cancels the queued review wakes) the watchdog no longer stands behind. */
export async function stopRevokedReviewRuns(deps: Deps, watchdogId: string, actor: Actor): Promise<string[]> {
  const watchdog = await deps.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } });
  const revoked = <T extends ReviewRow>(rows: T[]) =>
    rows.filter((r) => revocationOf({ ...r, reviewFingerprint: r.reviewFingerprint ?? '' }, watchdog) !== null);
  const skipReason = watchdogMayAct(watchdog) ? 'watchdog reconfigured' : 'watchdog removed';
  const wakes = revoked(
    await deps.db.wakeRequest.findMany({
      where: { reviewWatchdogId: watchdogId, status: 'queued' },
      select: reviewFacts,
    }),
  );
  await deps.db.wakeRequest.updateMany({
    where: { id: { in: wakes.map((w) => w.id) }, status: 'queued' },
    data: { status: 'cancelled', skipReason },
  });
  const runs = revoked(
    await deps.db.run.findMany({
      where: { reviewWatchdogId: watchdogId, status: { in: [...LIVE_RUN_STATUSES] } },
      select: reviewFacts,
    }),
  );
  for (const run of runs) await requestStop(deps, run.id, { kind: 'operator_stop', actor });
  if (runs.length > 0)
    deps.log.info({ watchdogId, runIds: runs.map((r) => r.id), reason: skipReason }, 'stopped revoked review runs');
  return runs.map((r) => r.id);
}
