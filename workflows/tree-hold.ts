import { ApplicationFailure, allHandlersFinished, condition, patched, proxyActivities, setCurrentDetails, setHandler, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, awaitPauseAppliedUpdate, holdStateQuery, releaseHoldUpdate, type HoldWorkflowState, type ReleaseArgs } from './definitions';

// Pause and release fan out over up to thousands of members; both are idempotent, so they
// retry until done, and a dead worker's fan-out moves elsewhere after one heartbeat timeout.
// Release's loser error (HoldNotActive) is non-retryable by construction.
const holdActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });

export interface TreeHoldInput {
  holdId: string;
  heartbeatTimeoutMs?: number;
}

/**
 * `tree-hold:<holdId>`: applies the pause, then waits for exactly one release (a Workflow Update,
 * so the caller gets the outcome or the 409 synchronously), and completes.
 */
export async function treeHoldWorkflow({ holdId, heartbeatTimeoutMs }: TreeHoldInput): Promise<HoldWorkflowState> {
  const { applyPause, releaseHold, retryOwedResumes } = holdActivities(heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
  const state: HoldWorkflowState = { holdId, applied: null, releasing: false, released: null, resumeRetries: 0 };

  setHandler(holdStateQuery, () => state);
  setHandler(awaitPauseAppliedUpdate, async () => {
    await condition(() => state.applied !== null);
    return state.applied!;
  });
  setHandler(
    releaseHoldUpdate,
    async ({ releaseId, wakeAgents, actor }) => {
      state.releasing = true;
      await condition(() => state.applied !== null);
      setCurrentDetails(`releasing (${wakeAgents ? 'waking agents' : 'without waking agents'}, by ${actor})`);
      state.released = await releaseHold.executeWithOptions({ summary: 'Release the hold: re-dispatch the interrupted work once' }, [holdId, releaseId, wakeAgents, actor]);
      return state.released;
    },
    {
      validator: (_request: ReleaseArgs) => {
        if (state.releasing || state.released) throw ApplicationFailure.nonRetryable(`tree hold ${holdId} is not active`, 'HoldNotActive');
      },
    },
  );

  setCurrentDetails('applying the pause to the subtree');
  state.applied = await applyPause.executeWithOptions({ summary: 'Pause the subtree and stop its runs' }, [holdId]);
  upsertSearchAttributes([{ key: StateKey, value: 'active' }]);
  if (!state.releasing) setCurrentDetails(`active: ${state.applied.memberCount} issues paused, ${state.applied.interruptedRunIds.length} runs interrupted; waiting for a release`);
  await condition(() => state.released !== null);
  upsertSearchAttributes([{ key: StateKey, value: 'released' }]);
  const { resumed, skipped, wakeFailures } = state.released!;
  setCurrentDetails(`released: ${resumed.length} resumed, ${skipped.length} skipped, ${wakeFailures.length} wake failures`);
  // a failed resume wake returned its claim: the obligation is retried here until it is dispatched
  let pendingFailures = patched('retry-failed-resume-wakes') ? wakeFailures.length : 0;
  for (let delayMs = 1_000; pendingFailures > 0; delayMs = Math.min(delayMs * 2, 300_000)) {
    await sleep(delayMs);
    const retried = await retryOwedResumes.executeWithOptions({ summary: 'Retry resumes whose wakes failed' }, [holdId]);
    state.resumeRetries += 1;
    pendingFailures = retried.wakeFailures.length;
    setCurrentDetails(`released: ${retried.resumed.length} resumed after ${state.resumeRetries} retries, ${pendingFailures} wake failures left`);
  }
  await condition(allHandlersFinished);
  return state;
}
