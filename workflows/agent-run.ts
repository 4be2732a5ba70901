import {
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { agentQueue } from '../domain/task-queue';
import type { RunStatus } from '../domain/statuses';
import {
  DEFAULT_ADOPTION_WINDOW_MS,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  failureMessage,
  type RunWorkflowInput,
} from './definitions';
import { claimQueuedRun } from './company-cap';
import { ADOPTION_PATCH, adoptUntilExit, mayStillRun } from './run-adoption';
import { settle, stopAndSettle } from './stop-and-settle';

// The agent itself: never retried (re-running an agent is not idempotent); the heartbeat timeout notices a dead
// worker within seconds, and cancellation (the stop) arrives through it. No cap on its length: a run lives as long
// as its agent does (TREEWARDEN_RUN_MAX_MS is the optional limit, applied by the supervisor); the SDK needs some
// start-to-close timeout, and ten years is none.
const adapterActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '3650 days',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { maximumAttempts: 1 },
  });

/** Runs whose agent started before the agents' queue existed ran it on the shared queue, as they did. */
export const AGENT_QUEUE_PATCH = 'agents-on-their-own-queue';

/** How an agent run's workflow ended: the run's settled status, or `not_started` when it was no longer queued. */
export type AgentRunResult = RunStatus | 'not_started';

/** One agent run, `agent-run:<runId>`: begin, execute through the adapter, settle exactly once. */
export async function agentRunWorkflow(input: RunWorkflowInput): Promise<AgentRunResult> {
  const { runId } = input;
  const heartbeatMs = input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
  const adapter = adapterActivities(heartbeatMs);
  // a host's worker that is restarting gets two heartbeat timeouts to come back before the stop is pending; while
  // the agent waits for adoption, a stop waits as long as the adoption would (it is verified once the host is back)
  let waitForHostMs = 2 * heartbeatMs;
  try {
    setCurrentDetails('queued: claiming the run');
    if (!(await claimQueuedRun(runId))) {
      setCurrentDetails('not started: the run was no longer queued');
      return 'not_started';
    }
    upsertSearchAttributes([{ key: StateKey, value: 'running' }]);
    setCurrentDetails('running: the agent executes through its adapter');
    let outcome;
    try {
      const summary = 'Execute the agent through its adapter';
      const queue = patched(AGENT_QUEUE_PATCH) ? { taskQueue: agentQueue(workflowInfo().taskQueue) } : {};
      outcome = await adapter.executeRun.executeWithOptions({ summary, ...queue }, [runId]);
    } catch (error) {
      if (!mayStillRun(error) || !patched(ADOPTION_PATCH)) throw error;
      const windowMs = input.adoptionWindowMs ?? DEFAULT_ADOPTION_WINDOW_MS;
      waitForHostMs = windowMs;
      outcome = await adoptUntilExit('run', runId, heartbeatMs, windowMs).catch((failure: unknown) => {
        // not a stop: the window has passed, or the host's worker was there; no second window before a pending stop
        if (!isCancellation(failure)) waitForHostMs = 2 * heartbeatMs;
        throw failure;
      });
    }
    return await settle({ target: 'run', id: runId, outcome });
  } catch (error) {
    // A stop request can land in the same workflow task as the failure of a lost worker's activity
    // (heartbeat timeout): that run was stopped, not failed, so a pending stop request counts.
    if (isCancellation(error) || CancellationScope.current().consideredCancelled) {
      const stopping = 'stopping: waiting for the process group to exit';
      return stopAndSettle({ target: 'run', id: runId, outcome: { kind: 'stopped' } }, stopping, waitForHostMs);
    }
    // a lost worker (heartbeat timeout) leaves the run's processes behind: find them by owner token
    const failed = { target: 'run', id: runId, outcome: { kind: 'error', error: failureMessage(error) } } as const;
    return stopAndSettle(failed, 'failed: stopping whatever the run left running', waitForHostMs);
  }
}
