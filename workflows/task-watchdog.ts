import {
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { historyFull } from './history';
import { StateKey } from '../domain/search-attributes';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from './definitions';
import {
  subtreeChangedSignal,
  watchdogRecoverySignal,
  watchdogRemovedSignal,
  watchdogStateQuery,
  type WatchdogWorkflowState,
} from './definitions';
import { WatchdogEntity } from './watchdog-entity';

// Evaluation reads a whole subtree (up to 10k issues) and writes a wake: two minutes is ample;
// retried with backoff because a missed evaluation would leave a stopped tree unnoticed; the
// heartbeat timeout moves the work of a dead worker to a live one within seconds.
const watchdogActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });

// The same evaluation as a local activity (issue 26): it runs inside the workflow task that delivered the change, so
// an isolated change costs one workflow task instead of three (signal, debounce timer, activity completion). It is
// idempotent (one wake per fingerprint, kept by the database), so a re-run after a lost worker or a timed-out
// attempt is harmless. One short attempt: a slow evaluation (a huge subtree, a loaded worker) must not hold the
// workflow task open, so its failure falls back to the activity above, with that one's retries.
const watchdogLocalActivities = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
});

/** Evaluations in the delivering workflow task, bursts paced by the debounce, and a safety tick of one statement. */
const LOCAL_EVALUATION_PATCH = 'evaluate-in-the-delivering-task';
/** A stop a review accepted only until a time is evaluated again then, on a timer of its own (issue 29, item 1). */
const RECHECK_PATCH = 'recheck-conditionally-accepted-stops';

export interface TaskWatchdogInput {
  watchdogId: string;
  issueId: string;
  /** safety tick: evaluate even without a signal, so a lost signal costs at most one tick */
  tickMs: number;
  /** coalescing window: a burst of changes becomes one evaluation */
  debounceMs: number;
  heartbeatTimeoutMs?: number;
  carried?: WatchdogWorkflowState;
}

/**
 * `task-watchdog:<issueId>`: evaluates the watched subtree whenever it changes (coalesced) and on
 * a safety tick; completes when its watchdog is removed. A change signal naming a newer watchdog
 * (removed, then re-added) restarts it fresh through continue-as-new.
 */
export async function taskWatchdogWorkflow(input: TaskWatchdogInput): Promise<WatchdogWorkflowState> {
  const heartbeatTimeoutMs = input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
  const { evaluateWatchdog, isWatchdogActive } = watchdogActivities(heartbeatTimeoutMs);
  const watchdog = new WatchdogEntity(input.carried ?? WatchdogEntity.initialState(input.watchdogId, input.issueId));
  setHandler(subtreeChangedSignal, (change) => watchdog.changed(change));
  setHandler(watchdogRecoverySignal, (ping) => watchdog.pinged(ping));
  setHandler(watchdogRemovedSignal, (removal) => watchdog.removalSignalled(removal));
  setHandler(watchdogStateQuery, () => watchdog.state);

  const confirmRemoval = async () => {
    const summary = { summary: 'Confirm the watchdog was removed' };
    if (!(await isWatchdogActive.executeWithOptions(summary, [watchdog.state.watchdogId]))) watchdog.confirmRemoved();
  };
  const evaluate = async (onTick: boolean) => {
    const local = patched(LOCAL_EVALUATION_PATCH);
    const id = watchdog.state.watchdogId;
    if (local && onTick && watchdog.tickMayBeCheap()) {
      const unchanged = { summary: 'Safety tick: has any change reached the watchdog since its last evaluation?' };
      if (!(await watchdogLocalActivities.watchdogChangedSinceEvaluation.executeWithOptions(unchanged, [id])))
        return watchdog.recordUnchangedTick();
    }
    const debounce = { summary: 'Coalesce a burst of subtree changes' };
    // an idle watchdog evaluates at once; one that evaluated a moment ago waits out the debounce (a burst)
    const waitMs = local
      ? watchdog.debounceLeftMs(input.debounceMs)
      : watchdog.state.pendingChanges > 0
        ? input.debounceMs
        : 0;
    if (waitMs > 0) await sleep(waitMs, debounce);
    watchdog.beginEvaluation();
    setCurrentDetails(`evaluating the subtree (evaluation ${watchdog.state.evaluations + 1})`);
    const summary = { summary: 'Evaluate the watched subtree; wake the watchdog agent on a new stop' };
    const evaluation = local
      ? await watchdogLocalActivities.evaluateWatchdog.executeWithOptions(summary, [id]).catch((error: unknown) => {
          if (isCancellation(error)) throw error;
          return evaluateWatchdog.executeWithOptions({ summary: `${summary.summary} (again, as an activity)` }, [id]);
        })
      : await evaluateWatchdog.executeWithOptions(summary, [id]);
    watchdog.recordEvaluation(evaluation);
    upsertSearchAttributes([{ key: StateKey, value: evaluation.state }]);
  };

  for (;;) {
    setCurrentDetails(watchdog.describe());
    const wait = watchdog.nextWait(input.tickMs, watchdog.awaitsRecheck() && patched(RECHECK_PATCH));
    const signalled = await condition(
      () => watchdog.needsAttention() || historyFull(HISTORY_EVENTS_BEFORE_CONTINUING),
      wait.ms,
      {
        summary: wait.summary,
      },
    );
    if (watchdog.takeRemovalRequest()) await confirmRemoval();
    // a successor that signalled while this run confirmed its own removal takes over instead
    if (watchdog.state.removed && watchdog.successorId === null) return finish(watchdog);
    // a burst of signals grows the history before any evaluation: the pending changes go on in
    // a fresh run first, well below the server's 4,096-event suggestion (bench scenario 4)
    if (watchdog.successorId !== null || historyFull(HISTORY_EVENTS_BEFORE_CONTINUING))
      return continueOrHandOver(input, watchdog);
    await evaluate(!signalled);
  }
}

/** The watchdog was removed and no successor took over: the workflow completes. */
async function finish(watchdog: WatchdogEntity): Promise<WatchdogWorkflowState> {
  upsertSearchAttributes([{ key: StateKey, value: 'removed' }]);
  setCurrentDetails(watchdog.describe());
  await condition(allHandlersFinished);
  return watchdog.state;
}

/** A fresh run: for a re-added watchdog (its successor), or for this one when its history is full. */
async function continueOrHandOver(input: TaskWatchdogInput, watchdog: WatchdogEntity): Promise<never> {
  await condition(allHandlersFinished);
  return continueAsNew<typeof taskWatchdogWorkflow>({ ...input, ...watchdog.nextRun() });
}

/** Our own continue-as-new threshold leaves room for a 1,000-signal burst under 4,096 events. */
const HISTORY_EVENTS_BEFORE_CONTINUING = 2_048;
