import { CancellationScope, isCancellation, patched, proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import type { RunStatus } from '../domain/statuses';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, failureMessage, type RunWorkflowInput } from './definitions';
import { stopOnOwningHost } from './host-affine';

// DB bookkeeping: short, idempotent CAS writes; retry through database blips.
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

// The agent itself: long, never retried (re-running an agent is not idempotent); the heartbeat
// timeout notices a dead worker within seconds, and cancellation (the stop) arrives through it.
const adapterActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '24 hours',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { maximumAttempts: 1 },
  });

// Executions started before 'host-affine-stop' verify on any worker (replay keeps them so); newer
// ones stop on the owning host (host-affine.ts). A minute bounds the wait for every owned process
// to exit (SIGKILL after the grace period); it heartbeats so a lost worker is retried quickly.
const stopper = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

/** How an agent run's workflow ended: the run's settled status, or `not_started` when it was no longer queued. */
export type AgentRunResult = RunStatus | 'not_started';

/** One agent run, `agent-run:<runId>`: begin, execute through the adapter, settle exactly once. */
export async function agentRunWorkflow({ runId, heartbeatTimeoutMs }: RunWorkflowInput): Promise<AgentRunResult> {
  const adapter = adapterActivities(heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
  // a host's worker that is restarting gets two heartbeat timeouts to come back before the stop is pending
  const stopOwnedProcesses = async (summary: string) => {
    if (patched('host-affine-stop')) await stopOnOwningHost('run', runId, 2 * (heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS));
    else await stopper.stopProcessGroup.executeWithOptions({ summary }, [runId]);
  };
  try {
    setCurrentDetails('queued: claiming the run');
    if (!(await bookkeeping.beginRun.executeWithOptions({ summary: 'Claim the queued run' }, [runId]))) {
      setCurrentDetails('not started: the run was no longer queued');
      return 'not_started';
    }
    upsertSearchAttributes([{ key: StateKey, value: 'running' }]);
    setCurrentDetails('running: the agent executes through its adapter');
    const outcome = await adapter.executeRun.executeWithOptions({ summary: 'Execute the agent through its adapter' }, [runId]);
    return await settle(runId, outcome);
  } catch (error) {
    // Since 'host-affine-stop': a stop request can land in the same workflow task as the failure of a
    // lost worker's activity (heartbeat timeout). That run was stopped, not failed; and in the
    // cancelled root scope its clean-up would be cancelled before it was scheduled, leaving the run
    // unsettled and its processes alive. So a pending stop request counts, and clean-ups are shielded.
    const stopRequested = isCancellation(error) || (CancellationScope.current().consideredCancelled && patched('host-affine-stop'));
    if (stopRequested) {
      return CancellationScope.nonCancellable(async () => {
        setCurrentDetails('stopping: waiting for the process group to exit');
        await stopOwnedProcesses('Stop the process group and verify it exited');
        return settle(runId, { kind: 'stopped' });
      });
    }
    if (!patched('stop-owned-processes-after-failure')) return settle(runId, { kind: 'error', error: failureMessage(error) });
    const cleanUp = async () => {
      // a lost worker (heartbeat timeout) leaves the run's processes behind: find them by owner token
      setCurrentDetails('failed: stopping whatever the run left running');
      await stopOwnedProcesses('Stop every process the failed run owns');
      return settle(runId, { kind: 'error', error: failureMessage(error) });
    };
    // a stop arriving during the clean-up must not cancel it
    return patched('host-affine-stop') ? CancellationScope.nonCancellable(cleanUp) : cleanUp();
  }
}

async function settle(runId: string, outcome: Parameters<Activities['finishRun']>[1]): Promise<RunStatus> {
  const status = await bookkeeping.finishRun.executeWithOptions({ summary: `Settle the run (${outcome.kind})` }, [runId, outcome]);
  upsertSearchAttributes([{ key: StateKey, value: status }]);
  setCurrentDetails(`settled: ${status}`);
  return status;
}
