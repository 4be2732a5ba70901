/**
 * Verified continuation (issue 14): when an agent stopped by a hold may continue later instead of
 * needing reconciliation. Pure: the activity reads the files and the verified stop, this decides.
 */

/** What an agent writes to `TREEWARDEN_CHECKPOINT_FILE` on SIGTERM to say it can continue. */
export type Checkpoint = { resumable: true; session?: unknown } & Record<string, unknown>;

/** Why a checkpoint does not count; each is an unknown outcome that needs reconciliation. */
export type CheckpointProblem =
  'missing' | 'written_before_stop' | 'too_large' | 'invalid_json' | 'not_an_object' | 'not_resumable';

/** The file as found: `text` is null when it was too large to read. */
export interface CheckpointFile {
  text: string | null;
  writtenAtMs: number;
}

export type CheckpointReading = { ok: true; checkpoint: Checkpoint } | { ok: false; problem: CheckpointProblem };

/**
 * The checkpoint file as found after a stop. `writtenAtMs` and `stopObservedAtMs` are both read
 * from the run's host (file mtimes on one filesystem), so no clock skew between hosts enters.
 */
export function readCheckpoint(file: CheckpointFile | null, stopObservedAtMs: number): CheckpointReading {
  if (!file) return { ok: false, problem: 'missing' };
  if (file.writtenAtMs < stopObservedAtMs) return { ok: false, problem: 'written_before_stop' };
  if (file.text === null) return { ok: false, problem: 'too_large' };
  let value: unknown;
  try {
    value = JSON.parse(file.text);
  } catch {
    return { ok: false, problem: 'invalid_json' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, problem: 'not_an_object' };
  if ((value as { resumable?: unknown }).resumable !== true) return { ok: false, problem: 'not_resumable' };
  return { ok: true, checkpoint: value as Checkpoint };
}

/**
 * `preserved`: the agent proved it can continue; `unknown_outcome`: it was in its adapter and
 * did not (it may have acted: never replayed blindly); `before_adapter`: it never got that far.
 */
export type StopOutcome = 'preserved' | 'unknown_outcome' | 'before_adapter';

export interface StopOutcomeFacts {
  adapterEntered: boolean;
  /** the verdict of the first (SIGTERM) attempt: a SIGKILL escalation is never a clean stop */
  sigtermVerdict: 'terminal-clean' | 'stop-partial';
  checkpoint: CheckpointReading;
  /**
   * For an `acp` run, whether its supervisor reported the stop preserved (its exit status, domain/acp-stop.ts): a
   * checkpoint it did not vouch for was written by someone else (the agent can write the run folder). Null for a
   * `process` run, whose own checkpoint is its claim.
   */
  supervisorVouched?: boolean | null;
}

/** why a stop's outcome is unknown */
export type UnknownOutcomeReason = CheckpointProblem | 'stop_partial' | 'not_vouched_by_supervisor';

export type StopOutcomeDecision =
  | { outcome: 'preserved'; checkpoint: Checkpoint }
  | { outcome: 'unknown_outcome'; reason: UnknownOutcomeReason }
  | { outcome: 'before_adapter' };

export function stopOutcomeOf(f: StopOutcomeFacts): StopOutcomeDecision {
  if (!f.adapterEntered) return { outcome: 'before_adapter' };
  if (f.sigtermVerdict !== 'terminal-clean') return { outcome: 'unknown_outcome', reason: 'stop_partial' };
  if (!f.checkpoint.ok) return { outcome: 'unknown_outcome', reason: f.checkpoint.problem };
  if (f.supervisorVouched === false) return { outcome: 'unknown_outcome', reason: 'not_vouched_by_supervisor' };
  return { outcome: 'preserved', checkpoint: f.checkpoint.checkpoint };
}

/** How an outcome is kept in a run's `stopResult`, beside the verdict and the attempts. */
export interface RecordedOutcome {
  outcome: StopOutcome;
  /** the parsed checkpoint, when preserved */
  checkpoint?: Checkpoint;
  /** why the outcome is unknown */
  outcomeReason?: UnknownOutcomeReason;
}

export function recordOutcome(d: StopOutcomeDecision): RecordedOutcome {
  if (d.outcome === 'preserved') return { outcome: 'preserved', checkpoint: d.checkpoint };
  if (d.outcome === 'unknown_outcome') return { outcome: 'unknown_outcome', outcomeReason: d.reason };
  return { outcome: d.outcome };
}

/** The checkpoint of a preserved stop, read back from a run's `stopResult`; null for any other stop. */
export function preservedCheckpoint(stopResult: unknown): Checkpoint | null {
  const recorded = stopResult as Partial<RecordedOutcome> | null;
  return recorded?.outcome === 'preserved' && recorded.checkpoint ? recorded.checkpoint : null;
}
