import type { EvaluationSummary } from '../domain/watchdog';
import type { SubtreeChange, WatchdogWorkflowState } from './definitions';

/**
 * A timer never shorter than this: a grace end comes from the database's clock, a re-check's from the worker's that
 * evaluated, neither from the workflow's.
 */
const MIN_RECHECK_MS = 250;

/**
 * What one task watchdog run knows: its state (carried across continue-as-new), a successor that
 * signalled, and whether its removal is requested or confirmed. The signal handlers only record
 * here; the workflow's main loop acts on it, so no handler ever awaits.
 */
export class WatchdogEntity {
  /** a newer watchdog of the same issue (removed, then re-added): the workflow hands over to it */
  successorId: string | null = null;
  /** workflow time of this run's last evaluation: the next one within the debounce is a burst's */
  private lastEvaluatedAtMs: number | null = null;

  constructor(readonly state: WatchdogWorkflowState) {}

  static initialState(watchdogId: string, issueId: string): WatchdogWorkflowState {
    return {
      watchdogId,
      issueId,
      lastEvaluation: null,
      evaluations: 0,
      changesReceived: 0,
      pendingChanges: 1, // evaluate once at start
      lastChangeAt: null,
      startedAt: new Date().toISOString(),
      removed: false,
      removalRequested: false,
    };
  }

  changed({ watchdogId }: SubtreeChange): void {
    if (this.isSuccessor(watchdogId)) return;
    this.state.changesReceived += 1;
    this.state.pendingChanges += 1;
    this.state.lastChangeAt = new Date().toISOString();
  }

  /** A worker start's recovery ping changes nothing, unless it comes from a successor. */
  pinged({ watchdogId }: SubtreeChange): void {
    this.isSuccessor(watchdogId);
  }

  removalSignalled({ watchdogId }: { watchdogId: string }): void {
    if (watchdogId === this.state.watchdogId) this.state.removalRequested = true;
  }

  /** Whether the main loop has something to do before the safety tick. */
  needsAttention(): boolean {
    const { pendingChanges, removalRequested, removed } = this.state;
    return pendingChanges > 0 || removalRequested || removed || this.successorId !== null;
  }

  /** A removal request to confirm now; a successor makes the confirmation moot (it takes over). */
  takeRemovalRequest(): boolean {
    if (!this.state.removalRequested || this.successorId !== null) return false;
    this.state.removalRequested = false;
    return true;
  }

  confirmRemoved(): void {
    this.state.removed = true;
  }

  /** The evaluation that starts covers every change received so far. */
  beginEvaluation(): void {
    this.state.pendingChanges = 0;
  }

  recordEvaluation(evaluation: EvaluationSummary): void {
    this.state.lastEvaluation = evaluation;
    this.state.evaluations += 1;
    this.lastEvaluatedAtMs = Date.now();
    if (evaluation.state === 'removed') this.state.removed = true;
  }

  /** How long the next evaluation waits: none when idle, the rest of the debounce right after another one. */
  debounceLeftMs(debounceMs: number): number {
    return this.lastEvaluatedAtMs === null ? 0 : Math.max(0, this.lastEvaluatedAtMs + debounceMs - Date.now());
  }

  /**
   * A safety tick may ask one question (did any change arrive?) instead of evaluating, unless the last evaluation
   * waits on time rather than on changes: a first-run grace, or a subtree it could not read whole.
   */
  tickMayBeCheap(): boolean {
    const state = this.state.lastEvaluation?.state;
    return state !== undefined && state !== 'pending_first_run' && state !== 'incomplete';
  }

  recordUnchangedTick(): void {
    this.state.unchangedTicks = (this.state.unchangedTicks ?? 0) + 1;
  }

  /** The next run's input: a successor starts fresh; otherwise this state goes on, pending signals included. */
  nextRun(): { watchdogId?: string; carried: WatchdogWorkflowState | undefined } {
    return this.successorId === null ? { carried: this.state } : { watchdogId: this.successorId, carried: undefined };
  }

  /**
   * How long to wait for a signal: the safety tick, or less when a first-run grace of the last evaluation ends
   * sooner (else a leaf assigned and never woken stayed unreviewed until the tick), or (`honourRecheck`, the
   * `recheck-conditionally-accepted-stops` patch) when the re-check of a stop a review accepted only until then
   * is due sooner. The timer's summary names which, so the Temporal UI shows a pending re-check.
   */
  nextWait(tickMs: number, honourRecheck: boolean): { ms: number; summary: string } {
    const last = this.state.lastEvaluation;
    const tick = { ms: tickMs, summary: 'Wait for a subtree change or the safety tick' };
    if (!last?.recheckAt) return tick;
    const dueInMs = Math.max(MIN_RECHECK_MS, Date.parse(last.recheckAt) - Date.now());
    if (last.state === 'pending_first_run') {
      return { ms: Math.min(tickMs, dueInMs), summary: 'Wait for a subtree change or the end of a first-run grace' };
    }
    if (last.state !== 'already_reviewed' || !honourRecheck || dueInMs >= tickMs) return tick;
    const summary = `Wait for a subtree change or the re-check at ${last.recheckAt} of a conditionally accepted stop`;
    return { ms: dueInMs, summary };
  }

  /** The last evaluation accepted the reviewed stop only until a time: the next wait may be its re-check's. */
  awaitsRecheck(): boolean {
    const last = this.state.lastEvaluation;
    return last?.state === 'already_reviewed' && last.recheckAt !== undefined;
  }

  /** The one line the Temporal UI shows as the workflow's current details. */
  describe(): string {
    const { removed, evaluations, lastEvaluation: last } = this.state;
    if (removed) return `removed after ${evaluations} evaluations`;
    if (!last) return 'waiting for the first evaluation';
    const woke = last.woke ? ', woke the watchdog agent' : '';
    const counts = `${last.includedCount} issues, ${last.stoppedLeafCount} stopped leaves${woke}`;
    return `${last.state}: ${counts} (evaluation ${evaluations}, ${last.evaluatedAt})`;
  }

  private isSuccessor(watchdogId: string): boolean {
    if (watchdogId === this.state.watchdogId) return false;
    this.successorId = watchdogId;
    return true;
  }
}
