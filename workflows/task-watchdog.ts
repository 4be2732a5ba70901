import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from './definitions';
import { subtreeChangedSignal, watchdogRecoverySignal, watchdogRemovedSignal, watchdogStateQuery, type WatchdogWorkflowState } from './definitions';

// Evaluation reads a whole subtree (up to 10k issues) and writes a wake: two minutes is ample;
// retried with backoff because a missed evaluation would leave a stopped tree unnoticed; the
// heartbeat timeout moves the work of a dead worker to a live one within seconds.
const watchdogActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });

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
  const { evaluateWatchdog, isWatchdogActive } = watchdogActivities(input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
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
  setHandler(watchdogRecoverySignal, ({ watchdogId }) => {
    if (watchdogId !== state.watchdogId) successorId = watchdogId;
  });
  setHandler(watchdogRemovedSignal, ({ watchdogId }) => {
    if (watchdogId === state.watchdogId) removalRequested = true;
  });
  setHandler(watchdogStateQuery, () => state);
  /** A re-added watchdog's run replaces this one, fresh. */
  const handOver = async () => {
    await condition(allHandlersFinished);
    return continueAsNew<typeof taskWatchdogWorkflow>({ ...input, watchdogId: successorId!, carried: undefined });
  };
  // A successor that signalled while this run confirmed its own removal takes over instead of
  // being dropped with the completed run.
  const successorTakesOver = () => successorId !== null && patched('hand-over-to-successor-after-removal');

  for (;;) {
    setCurrentDetails(describe(state));
    const graceRecheckMs = untilFirstRunGraceEnds(state.lastEvaluation);
    const waitMs = graceRecheckMs === null ? input.tickMs : Math.min(input.tickMs, graceRecheckMs);
    const waitSummary = graceRecheckMs === null ? 'Wait for a subtree change or the safety tick' : 'Wait for a subtree change or the end of a first-run grace';
    await condition(() => state.pendingChanges > 0 || removalRequested || successorId !== null, waitMs, { summary: waitSummary });
    if (successorId !== null) return handOver();
    if (removalRequested) {
      removalRequested = false;
      if (!(await isWatchdogActive.executeWithOptions({ summary: 'Confirm the watchdog was removed' }, [state.watchdogId]))) {
        if (successorTakesOver()) return handOver();
        state.removed = true;
        upsertSearchAttributes([{ key: StateKey, value: 'removed' }]);
        setCurrentDetails(describe(state));
        await condition(allHandlersFinished);
        return state;
      }
    }
    // A burst of signals grows the history before any evaluation: hand the pending changes to a
    // fresh run first, well below the server's 4,096-event suggestion (bench scenario 4).
    if (patched('continue-as-new-before-evaluating') && historyFull()) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof taskWatchdogWorkflow>({ ...input, carried: state });
    }
    if (state.pendingChanges > 0) await sleep(input.debounceMs, { summary: 'Coalesce a burst of subtree changes' });
    state.pendingChanges = 0;
    setCurrentDetails(`evaluating the subtree (evaluation ${state.evaluations + 1})`);
    state.lastEvaluation = await evaluateWatchdog.executeWithOptions({ summary: 'Evaluate the watched subtree; wake the watchdog agent on a new stop' }, [state.watchdogId]);
    state.evaluations += 1;
    upsertSearchAttributes([{ key: StateKey, value: state.lastEvaluation.state }]);
    if (state.lastEvaluation.state === 'removed' && successorTakesOver()) return handOver();
    if (state.lastEvaluation.state === 'removed') {
      state.removed = true;
      setCurrentDetails(describe(state));
      await condition(allHandlersFinished);
      return state;
    }
    if (patched('continue-as-new-before-evaluating') ? historyFull() : workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof taskWatchdogWorkflow>({ ...input, carried: state });
    }
  }
}

/** A timer never shorter than this: the grace end comes from the database's clock, not the workflow's. */
const MIN_GRACE_RECHECK_MS = 250;

/**
 * Milliseconds until the earliest first-run grace of the last evaluation ends, or null when nothing
 * waits on one. Without it a subtree whose only leaf was assigned and never woken stayed unreviewed
 * until the safety tick.
 */
function untilFirstRunGraceEnds(last: WatchdogWorkflowState['lastEvaluation']): number | null {
  if (last?.state !== 'pending_first_run' || !last.recheckAt) return null;
  if (!patched('recheck-after-first-run-grace')) return null;
  return Math.max(MIN_GRACE_RECHECK_MS, Date.parse(last.recheckAt) - Date.now());
}

/** Our own continue-as-new threshold leaves room for a 1,000-signal burst under 4,096 events. */
const HISTORY_EVENTS_BEFORE_CONTINUING = 2_048;

function historyFull(): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= HISTORY_EVENTS_BEFORE_CONTINUING;
}

/** The one line the Temporal UI shows as the workflow's current details. */
function describe(state: WatchdogWorkflowState): string {
  if (state.removed) return `removed after ${state.evaluations} evaluations`;
  const last = state.lastEvaluation;
  if (!last) return 'waiting for the first evaluation';
  const woke = last.woke ? ', woke the watchdog agent' : '';
  return `${last.state}: ${last.includedCount} issues, ${last.stoppedLeafCount} stopped leaves${woke} (evaluation ${state.evaluations}, ${last.evaluatedAt})`;
}
