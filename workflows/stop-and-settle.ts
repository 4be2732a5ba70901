/**
 * The end of an agent run or a background job: whatever it still owns is stopped on the host that
 * runs it (verified), then its row is settled exactly once.
 */
import {
  CancellationScope,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { TASK_PRIORITY } from '../domain/task-priority';
import { failureMessage } from './definitions';
import { onHost } from './host-affine';

// DB bookkeeping (claim, settle, which host, a pending stop): short idempotent CAS writes, retried
// through database blips; bounded (20 attempts, about 8 minutes) so a database that stays broken
// fails the workflow visibly instead of retrying for ever.
export const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

// Stopping and settling go before new work of the same company (a settled run frees its host and its company's cap);
// the fairness key is inherited from the workflow.
const first = { priority: { priorityKey: TASK_PRIORITY.stop } };

type Target = 'run' | 'job';
/** What settles a run or a job: its id and its outcome. */
export type Settlement =
  | { target: 'run'; id: string; outcome: Parameters<Activities['finishRun']>[1] }
  | { target: 'job'; id: string; outcome: Parameters<Activities['finishJob']>[1] };
/** The status a settled row ends in: a run's or a job's. */
export type SettledStatus<S extends Settlement> = S['target'] extends 'run'
  ? Awaited<ReturnType<Activities['finishRun']>>
  : Awaited<ReturnType<Activities['finishJob']>>['status'];

/** Records the outcome (a CAS: the first settlement wins) and returns the status the row ends in. */
export async function settle<S extends Settlement>(settlement: S): Promise<SettledStatus<S>> {
  const summary = { summary: `Settle the ${settlement.target} (${settlement.outcome.kind})`, ...first };
  const status =
    settlement.target === 'run'
      ? await bookkeeping.finishRun.executeWithOptions(summary, [settlement.id, settlement.outcome])
      : (await bookkeeping.finishJob.executeWithOptions(summary, [settlement.id, settlement.outcome])).status;
  upsertSearchAttributes([{ key: StateKey, value: status }]);
  setCurrentDetails(`settled: ${status}`);
  return status as SettledStatus<S>;
}

/**
 * Stops what the run or job owns, then settles it. Shielded: in a cancelled scope (the stop
 * request itself) the clean-up would be cancelled before it was scheduled, leaving the row
 * unsettled and its processes alive.
 */
export function stopAndSettle<S extends Settlement>(
  settlement: S,
  details: string,
  waitForHostMs: number,
): Promise<SettledStatus<S>> {
  return CancellationScope.nonCancellable(async () => {
    setCurrentDetails(details);
    await stopOnOwningHost(settlement.target, settlement.id, waitForHostMs);
    return settle(settlement);
  });
}

/**
 * The verified stop, on the owning host. When no worker of that host answers (or it fails while
 * verifying) the stop is recorded `stop-pending` naming the host, never clean: the host's next
 * worker completes it at start, or an operator declares the host lost.
 */
async function stopOnOwningHost(target: Target, id: string, waitForHostMs: number): Promise<void> {
  const hostOf = { summary: `Find the host that runs the ${target}'s processes`, ...first };
  const hostId = await bookkeeping.hostOf.executeWithOptions(hostOf, [target, id]);
  if (hostId === null) {
    const nothing = { summary: 'Record the stop: no host ever started a process', ...first };
    await bookkeeping.recordNothingStarted.executeWithOptions(nothing, [target, id]);
    return;
  }
  // waiting for every owned process to exit (SIGKILL after the grace period) takes well under a
  // minute; it heartbeats, so a worker that dies mid-stop is retried on the same host quickly
  const stopper = onHost(hostId, {
    waitForHostMs,
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: '10 seconds',
    maximumAttempts: 10,
  });
  try {
    const summary = { summary: `Stop the ${target}'s processes on host ${hostId} and verify they exited`, ...first };
    const stop = target === 'run' ? stopper.stopProcessGroup : stopper.stopJobProcesses;
    await stop.executeWithOptions(summary, [id]);
  } catch (error) {
    if (isCancellation(error)) throw error;
    const pending = { summary: `Record the stop as pending on host ${hostId}`, ...first };
    await bookkeeping.recordStopPending.executeWithOptions(pending, [target, id, hostId, failureMessage(error)]);
  }
}
