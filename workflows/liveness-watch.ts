import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { historyFull } from './history';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, livePathsMayHaveEndedSignal } from './definitions';
import { LivenessWatchEntity } from './liveness-watch-entity';

// The same pass as the safety schedule's (workflows/liveness-recovery.ts): a read and a few short transactions per
// recovery. Retried with backoff until it lands: a pass given up would leave a stall to the slow safety scan, and
// each recovery is exactly once by its row, so a pass that ran partly repeats nothing.
const watchActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
  });

export interface LivenessWatchInput {
  /** TREEWARDEN_LIVENESS_STALL_MS of the worker that started it */
  stallMs: number;
  heartbeatTimeoutMs?: number;
  /** a run continued as new: the pass it still owed */
  dueAtMs?: number | null;
}

/** What one execution did: the Temporal UI shows it as the result. */
export interface LivenessWatchResult {
  passes: number;
  recovered: number;
  stoodDown: number;
}

/** Signals grow the history (at most two a minute per worker); a run that long hands over to a fresh one. */
const HISTORY_EVENTS_BEFORE_CONTINUING = 2_000;

/**
 * `liveness-watch:<taskQueue>`: liveness recovery, event-driven. The change dispatcher signals it (starting it when
 * it is not running) after a change that can end an issue's last live path; it waits on a timer (seen in the UI) for
 * the first moment such an issue can be stalled, runs the recovery pass then, and keeps waiting for the next idle
 * issue the pass says falls due. Completes when no idle issue is waiting; the next signal starts it again.
 */
export async function livenessWatchWorkflow(input: LivenessWatchInput): Promise<LivenessWatchResult> {
  const { recoverStalledIssues } = watchActivities(input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
  const watch = new LivenessWatchEntity(input.dueAtMs ?? null, input.stallMs);
  setHandler(livePathsMayHaveEndedSignal, () => watch.pathsMayHaveEnded(Date.now()));
  const result: LivenessWatchResult = { passes: 0, recovered: 0, stoodDown: 0 };

  for (;;) {
    while (watch.dueAtMs !== null && !historyFull(HISTORY_EVENTS_BEFORE_CONTINUING)) {
      const due = watch.dueAtMs;
      setCurrentDetails(`next pass at ${new Date(due).toISOString()} (the first moment an idle issue can be stalled)`);
      if (await condition(() => watch.dueAtMs !== due, Math.max(0, due - Date.now()))) continue;
      watch.passing();
      const pass = await recoverStalledIssues.executeWithOptions({ summary: 'Recover issues stalled by now' }, []);
      watch.passed(Date.now(), pass.nextPassInMs);
      result.passes++;
      result.recovered += pass.recovered;
      result.stoodDown += pass.stoodDown;
    }
    await condition(allHandlersFinished);
    if (watch.dueAtMs === null) break;
    if (historyFull(HISTORY_EVENTS_BEFORE_CONTINUING))
      return continueAsNew<typeof livenessWatchWorkflow>({ ...input, dueAtMs: watch.dueAtMs });
  }
  setCurrentDetails(`no idle issue waiting: ${result.recovered} recovered in ${result.passes} passes`);
  return result;
}
