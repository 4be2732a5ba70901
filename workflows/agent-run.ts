import { CancellationScope, isCancellation, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import type { RunWorkflowInput } from './definitions';

// DB bookkeeping: short, idempotent CAS writes; retry through database blips.
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

// The agent itself: long, never retried (re-running an agent is not idempotent); the heartbeat
// timeout notices a dead worker within 30 s, and cancellation (the stop) arrives through it.
const adapter = proxyActivities<Activities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

// Verifying a stop waits for the process group to exit (SIGKILL after the grace period): a
// minute bounds it; it heartbeats so a lost worker is retried elsewhere quickly.
const stopper = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

/** One agent run, `agent-run:<runId>`: begin, execute through the adapter, settle exactly once. */
export async function agentRunWorkflow({ runId }: RunWorkflowInput): Promise<string> {
  try {
    if (!(await bookkeeping.beginRun(runId))) return 'not_started';
    upsertSearchAttributes([{ key: StateKey, value: 'running' }]);
    const outcome = await adapter.executeRun(runId);
    return await settle(runId, outcome);
  } catch (error) {
    if (isCancellation(error)) {
      return CancellationScope.nonCancellable(async () => {
        await stopper.stopProcessGroup(runId);
        return settle(runId, { kind: 'stopped' });
      });
    }
    return settle(runId, { kind: 'error', error: error instanceof Error ? error.message : String(error) });
  }
}

async function settle(runId: string, outcome: Parameters<Activities['finishRun']>[1]): Promise<string> {
  const status = await bookkeeping.finishRun(runId, outcome);
  upsertSearchAttributes([{ key: StateKey, value: status }]);
  return status;
}
