/**
 * Host-affine activities: whatever reads or signals a run's processes is scheduled on the task
 * queue of the host that runs them (`<task queue>-host:<hostId>`), never on the shared one, whose
 * workers on other hosts cannot see those processes.
 */
import { isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { Activities } from '../activities';
import { hostQueue } from '../domain/host';
import { failureMessage } from './definitions';

// DB bookkeeping (which host, a pending stop): short idempotent writes, retried through database blips.
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

/** The activities of one host's queue. */
export function onHost(hostId: string, options: { waitForHostMs: number; startToCloseTimeout: Duration; heartbeatTimeout?: Duration; maximumAttempts: number }) {
  return proxyActivities<Activities>({
    taskQueue: hostQueue(workflowInfo().taskQueue, hostId),
    // a live worker of the host polls all the time and starts it at once; a host without one
    // (crashed, restarting, gone) gets this long, then the caller says the host is unreachable
    scheduleToStartTimeout: options.waitForHostMs,
    startToCloseTimeout: options.startToCloseTimeout,
    ...(options.heartbeatTimeout ? { heartbeatTimeout: options.heartbeatTimeout } : {}),
    retry: { initialInterval: '1 second', maximumAttempts: options.maximumAttempts },
  });
}

/**
 * The verified stop, on the owning host. When no worker of that host answers (or it fails while
 * verifying) the stop is recorded `stop-pending` naming the host, never clean: the host's next
 * worker completes it at start, or an operator declares the host lost.
 */
export async function stopOnOwningHost(target: 'run' | 'job', id: string, waitForHostMs: number): Promise<void> {
  const hostId = await bookkeeping.hostOf.executeWithOptions({ summary: `Find the host that runs the ${target}'s processes` }, [target, id]);
  if (hostId === null) {
    await bookkeeping.recordNothingStarted.executeWithOptions({ summary: 'Record the stop: no host ever started a process' }, [target, id]);
    return;
  }
  // waiting for every owned process to exit (SIGKILL after the grace period) takes well under a
  // minute; it heartbeats, so a worker that dies mid-stop is retried on the same host quickly
  const host = onHost(hostId, { waitForHostMs, startToCloseTimeout: '1 minute', heartbeatTimeout: '10 seconds', maximumAttempts: 10 });
  try {
    const summary = { summary: `Stop the ${target}'s processes on host ${hostId} and verify they exited` };
    await (target === 'run' ? host.stopProcessGroup.executeWithOptions(summary, [id]) : host.stopJobProcesses.executeWithOptions(summary, [id]));
  } catch (error) {
    if (isCancellation(error)) throw error;
    await bookkeeping.recordStopPending.executeWithOptions({ summary: `Record the stop as pending on host ${hostId}` }, [target, id, hostId, failureMessage(error)]);
  }
}
