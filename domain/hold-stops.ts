/**
 * Whether a hold's stops are verified (seed 002): a pause answers once its stops are requested, and
 * a stop is proven only by its run's verified stop result. Pure: the facts are each interrupted
 * run's row (holds/read.ts reads them), the hold's stop state is the worst of its runs'.
 */
import { isTerminalRunStatus, type RunStatus } from './statuses';

/**
 * One interrupted run's stop:
 * - `verified`: the verified stop found nothing left (`terminal-clean`), or the run was stopped before it
 *   started a process;
 * - `pending`: the run is still unwinding, or no worker of its host has verified the stop (`stop-pending`);
 * - `partial`: the last verification found survivors (`stop-partial`), listed until a later one finds none;
 * - `host_lost`: its host was declared lost, so nothing can verify the stop;
 * - `ended`: the run ended on its own before the stop reached it: nothing was stopped.
 */
export const RUN_STOP_STATES = ['verified', 'pending', 'partial', 'host_lost', 'ended'] as const;
export type RunStopState = (typeof RUN_STOP_STATES)[number];
/** A hold's: `verified` when every run it stopped is verified (or ended on its own, or there was none). */
export const HOLD_STOP_STATES = ['verified', 'pending', 'partial', 'host_lost'] as const;
export type HoldStopState = (typeof HOLD_STOP_STATES)[number];

export interface SurvivingProcess {
  pid: number;
  pgid: number;
  command: string;
}

export interface RunStop {
  runId: string;
  state: RunStopState;
  /** the run's `stopResult.verdict`, null while none is recorded */
  verdict: string | null;
  /** what the last verification found alive (only for `partial`) */
  survivors: SurvivingProcess[];
  /** live holders of the run's writer lock that are not its processes (only for `partial`) */
  writersAlive: number;
}

export interface InterruptedRun {
  id: string;
  status: RunStatus;
  stopRequestedAt: Date | null;
  stopResult: unknown;
}

interface RecordedStop {
  verdict?: unknown;
  attempts?: { survivors?: SurvivingProcess[]; writersAlive?: number }[];
}

const VERDICT_STATES: Record<string, RunStopState> = {
  'terminal-clean': 'verified',
  'stop-partial': 'partial',
  'stop-pending': 'pending',
  'host-lost': 'host_lost',
};

export function runStopOf(run: InterruptedRun): RunStop {
  const recorded = (run.stopResult ?? null) as RecordedStop | null;
  const verdict = typeof recorded?.verdict === 'string' ? recorded.verdict : null;
  const none = { runId: run.id, verdict, survivors: [], writersAlive: 0 };
  const state = verdict !== null ? VERDICT_STATES[verdict] : undefined;
  if (state === 'partial') {
    const last = recorded?.attempts?.at(-1);
    return { ...none, state, survivors: last?.survivors ?? [], writersAlive: last?.writersAlive ?? 0 };
  }
  if (state) return { ...none, state };
  if (!isTerminalRunStatus(run.status)) return { ...none, state: 'pending' };
  // a queued run cancelled by its stop never started a process; any other end came before the stop
  const stoppedBeforeStart = run.status === 'cancelled' && run.stopRequestedAt !== null;
  return { ...none, state: stoppedBeforeStart ? 'verified' : 'ended' };
}

export interface HoldSurvivors {
  runId: string;
  issueId: string;
  processes: SurvivingProcess[];
  writersAlive: number;
}

const SEVERITY: HoldStopState[] = ['partial', 'pending', 'host_lost'];

export interface HoldStops {
  stopState: HoldStopState;
  survivors: HoldSurvivors[];
}

/** The hold's stop state (the worst of its runs': partial, pending, host_lost, then verified) and its survivors. */
export function holdStopsOf(members: { issueId: string; stop: RunStop | null }[]): HoldStops {
  const states = new Set(members.map((m) => m.stop?.state));
  const survivors = members.flatMap(({ issueId, stop }) =>
    stop?.state === 'partial'
      ? [{ runId: stop.runId, issueId, processes: stop.survivors, writersAlive: stop.writersAlive }]
      : [],
  );
  return { stopState: SEVERITY.find((s) => states.has(s)) ?? 'verified', survivors };
}
