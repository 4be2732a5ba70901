/**
 * Host-affine activities: whatever reads or signals a run's processes is scheduled on the task
 * queue of the host that runs them (`<task queue>-host:<hostId>`), never on the shared one, whose
 * workers on other hosts cannot see those processes.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { Activities } from '../activities';
import { hostQueue } from '../domain/task-queue';

/** The activities of one host's queue. */
export function onHost(
  hostId: string,
  options: {
    waitForHostMs: number;
    startToCloseTimeout: Duration;
    heartbeatTimeout?: Duration;
    maximumAttempts: number;
  },
) {
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
