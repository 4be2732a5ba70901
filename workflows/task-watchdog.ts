import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { subtreeChangedSignal, watchdogRemovedSignal, watchdogStateQuery, type WatchdogWorkflowState } from './definitions';

// Evaluation reads a whole subtree (up to 10k issues) and writes a wake: a minute is ample;
// retried with backoff because a missed evaluation would leave a stopped tree unnoticed.
const { evaluateWatchdog, isWatchdogActive } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface TaskWatchdogInput {
  watchdogId: string;
  issueId: string;
  /** safety tick: evaluate even without a signal, so a lost signal costs at most one tick */
  tickMs: number;
  /** coalescing window: a burst of changes becomes one evaluation */
  debounceMs: number;
  carried?: WatchdogWorkflowState;
}

/**
 * `task-watchdog:<issueId>`: evaluates the watched subtree whenever it changes (coalesced) and on
 * a safety tick; completes when its watchdog is removed. A change signal naming a newer watchdog
 * (removed, then re-added) restarts it fresh through continue-as-new.
 */
export async function taskWatchdogWorkflow(input: TaskWatchdogInput): Promise<WatchdogWorkflowState> {
  const state: WatchdogWorkflowState = input.carried ?? {
    watchdogId: input.watchdogId,
    issueId: input.issueId,
    lastEvaluation: null,
    evaluations: 0,
    changesReceived: 0,
    pendingChanges: 1, // evaluate once at start
    lastChangeAt: null,
    startedAt: new Date().toISOString(),
    removed: false,
  };
  let successorId: string | null = null;
  let removalRequested = false;

  setHandler(subtreeChangedSignal, ({ watchdogId }) => {
    if (watchdogId !== state.watchdogId) {
      successorId = watchdogId;
      return;
    }
    state.changesReceived += 1;
    state.pendingChanges += 1;
    state.lastChangeAt = new Date().toISOString();
  });
  setHandler(watchdogRemovedSignal, ({ watchdogId }) => {
    if (watchdogId === state.watchdogId) removalRequested = true;
  });
  setHandler(watchdogStateQuery, () => state);

  for (;;) {
    await condition(() => state.pendingChanges > 0 || removalRequested || successorId !== null, input.tickMs);
    if (successorId !== null) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof taskWatchdogWorkflow>({ ...input, watchdogId: successorId, carried: undefined });
    }
    if (removalRequested) {
      removalRequested = false;
      if (!(await isWatchdogActive(state.watchdogId))) {
        state.removed = true;
        upsertSearchAttributes([{ key: StateKey, value: 'removed' }]);
        await condition(allHandlersFinished);
        return state;
      }
    }
    if (state.pendingChanges > 0) await sleep(input.debounceMs);
    state.pendingChanges = 0;
    state.lastEvaluation = await evaluateWatchdog(state.watchdogId);
    state.evaluations += 1;
    upsertSearchAttributes([{ key: StateKey, value: state.lastEvaluation.state }]);
    if (state.lastEvaluation.state === 'removed') {
      state.removed = true;
      await condition(allHandlersFinished);
      return state;
    }
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof taskWatchdogWorkflow>({ ...input, carried: state });
    }
  }
}
