/**
 * A watchdog's review runs once the watchdog is removed or reassigned (issue 24). Their tokens lose every right at
 * once, because each request re-reads the watchdog (domain/review-authority.ts); this also stops them, verified like
 * any stop, and cancels review wakes not yet dispatched, so no agent goes on working for authority it lost.
 */
import type { Actor } from '../domain/actor';
import { LIVE_RUN_STATUSES } from '../domain/statuses';
import type { Deps } from '../runtime/deps';
import { requestStop } from '../runs/runs';

/** Stops the live review runs (and cancels the queued review wakes) the watchdog no longer stands behind. */
export async function stopRevokedReviewRuns(deps: Deps, watchdogId: string, actor: Actor): Promise<string[]> {
  const watchdog = await deps.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } });
  const revokedAgent = watchdog.status === 'active' ? { not: watchdog.agentId } : undefined;
  const skipReason = watchdog.status === 'active' ? 'watchdog reassigned' : 'watchdog removed';
  await deps.db.wakeRequest.updateMany({
    where: { reviewWatchdogId: watchdogId, status: 'queued', agentId: revokedAgent },
    data: { status: 'cancelled', skipReason },
  });
  const runs = await deps.db.run.findMany({
    where: { reviewWatchdogId: watchdogId, status: { in: [...LIVE_RUN_STATUSES] }, agentId: revokedAgent },
    select: { id: true },
  });
  for (const run of runs) await requestStop(deps, run.id, { kind: 'operator_stop', actor });
  if (runs.length > 0)
    deps.log.info({ watchdogId, runIds: runs.map((r) => r.id), reason: skipReason }, 'stopped revoked review runs');
  return runs.map((r) => r.id);
}
