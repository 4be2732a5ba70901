import { ApplicationFailure, allHandlersFinished, condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { awaitPauseAppliedUpdate, holdStateQuery, releaseHoldUpdate, type HoldWorkflowState, type ReleaseArgs } from './definitions';

// Pause and release fan out over up to thousands of members; both are idempotent, so they
// retry until done. Release's loser error (HoldNotActive) is non-retryable by construction.
const { applyPause, releaseHold } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export interface TreeHoldInput {
  holdId: string;
}

/**
 * `tree-hold:<holdId>`: applies the pause, then waits for exactly one release (a Workflow Update,
 * so the caller gets the outcome or the 409 synchronously), and completes.
 */
export async function treeHoldWorkflow({ holdId }: TreeHoldInput): Promise<HoldWorkflowState> {
  const state: HoldWorkflowState = { holdId, applied: null, releasing: false, released: null };

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
      state.released = await releaseHold(holdId, releaseId, wakeAgents, actor);
      return state.released;
    },
    {
      validator: (_request: ReleaseArgs) => {
        if (state.releasing || state.released) throw ApplicationFailure.nonRetryable(`tree hold ${holdId} is not active`, 'HoldNotActive');
      },
    },
  );

  state.applied = await applyPause(holdId);
  upsertSearchAttributes([{ key: StateKey, value: 'active' }]);
  await condition(() => state.released !== null);
  upsertSearchAttributes([{ key: StateKey, value: 'released' }]);
  await condition(allHandlersFinished);
  return state;
}
