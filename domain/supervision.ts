/**
 * Run supervision verdicts (seed 003): one closed union, each with its own action, decided from
 * the facts of the ownership graph. Pure: the services gather the facts, this decides.
 */
import { createHash } from 'node:crypto';

export const VERDICT_ACTIONS = {
  'live-running': 'wait',
  'silent-running': 'inspect (never killed automatically)',
  'stop-partial': 'kill the surviving descendants, then verify again',
  'failed-uninspected': 'inspect the result',
  'failed-superseded': 'close automatically: a verified replacement succeeded',
  'monitor-orphaned': 'stop automatically: its owner is terminal',
  'terminal-clean': 'nothing: blocks nothing',
  'stop-pending': 'wait for a worker on the owning host to verify the stop, or declare the host lost',
  'host-lost': 'nothing to verify: the host and its processes were declared gone (not a verified clean stop)',
} as const;

export type Verdict = keyof typeof VERDICT_ACTIONS;

/** What findings record: a verdict, or that a worker reaped an orphan's processes on its host. */
export type FindingKind = Verdict | 'orphan-reaped';

/**
 * A stop only the owning host can verify: `stop-pending` while no worker of that host answers,
 * `host-lost` once an operator declared the host gone. Neither is ever `terminal-clean`.
 */
export type UnverifiedStop =
  { verdict: 'stop-pending'; host: string; since: string } | { verdict: 'host-lost'; host: string; declaredAt: string };

export function unverifiedStopOf(stopResult: unknown): UnverifiedStop['verdict'] | null {
  const verdict = (stopResult as { verdict?: unknown } | null)?.verdict;
  return verdict === 'stop-pending' || verdict === 'host-lost' ? verdict : null;
}

/** What a failed run became after terminal reconciliation. */
/**
 * What a failed run became after terminal reconciliation: `inspected` when the result is known
 * (an exit code and its output), `superseded` when a verified replacement took over, and
 * `acknowledged` when a person closed it; `uninspected` when the outcome is unknown.
 */
export type FailureState = 'uninspected' | 'inspected' | 'superseded' | 'acknowledged';

export interface SupervisionFacts {
  kind: 'agent_run' | 'shell_job' | 'monitor';
  /** queued/running (a run) or running (a job) */
  active: boolean;
  failed: boolean;
  failureState: FailureState | null;
  /** a stop was requested or the work is terminal: nothing of it may still be alive */
  mustBeGone: boolean;
  survivors: number;
  writersAlive: number;
  leaseHeld: boolean;
  /** for jobs: the owning run is terminal */
  ownerTerminal: boolean;
  silence: SilenceLevel;
  /** a tombstone naming this work sits in its working directory */
  tombstone: boolean;
  /** the recorded stop awaits its host, or the host was declared lost */
  unverifiedStop: UnverifiedStop['verdict'] | null;
}

export function verdictOf(f: SupervisionFacts): Verdict {
  if (f.kind === 'monitor' && f.active && f.ownerTerminal) return 'monitor-orphaned';
  if (f.unverifiedStop) return f.unverifiedStop;
  if (f.mustBeGone && (f.survivors > 0 || f.writersAlive > 0)) return 'stop-partial';
  if (f.tombstone && f.survivors === 0 && f.writersAlive === 0 && !f.leaseHeld) return 'terminal-clean';
  if (f.active) return f.silence === 'ok' ? 'live-running' : 'silent-running';
  if (!f.failed) return 'terminal-clean';
  switch (f.failureState) {
    case 'superseded':
      return 'failed-superseded';
    case 'inspected':
    case 'acknowledged':
      return 'terminal-clean';
    case 'uninspected':
    case null:
      return 'failed-uninspected';
  }
}

/**
 * Stable hash of a finding's material content: the same finding hashes the same, whatever its key
 * order, and findings that differ anywhere (also inside nested objects) hash differently. Keys are
 * sorted at every level (a replacer *array* would whitelist the top-level keys at every level and
 * silently drop nested ones); for flat details the text is what it always was, so stored hashes hold.
 */
export function findingHash(verdict: FindingKind, details: Record<string, unknown>): string {
  const canonical = JSON.stringify(details, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
  return createHash('sha256').update(`${verdict}\n${canonical}`).digest('hex');
}

// ── liveness ────────────────────────────────────────────────────────────────────────────────

export type SilenceLevel = 'ok' | 'suspicious' | 'critical';
export type SilenceDecision = 'snooze' | 'continue' | 'dismiss';

/** Signs that a run is doing something (its supervisor's own heartbeat only proves it is supervised). */
export interface LivenessSignals {
  apiActivityAt: Date | null;
  journalPulseAt: Date | null;
  /** the process group was seen alive and using CPU */
  processActiveAt: Date | null;
  /** output-file modification time: a fallback only */
  outputModifiedAt: Date | null;
}

/** The latest sign of life; output mtime counts only when nothing better exists. */
export function lastSignOfLife(s: LivenessSignals): Date | null {
  const primary = [s.apiActivityAt, s.journalPulseAt, s.processActiveAt].filter((d): d is Date => d !== null);
  const candidates = primary.length > 0 ? primary : [s.outputModifiedAt].filter((d): d is Date => d !== null);
  return candidates.length ? new Date(Math.max(...candidates.map((d) => d.getTime()))) : null;
}

export interface SilencePolicy {
  suspiciousAfterMs: number;
  criticalAfterMs: number;
  /** `continue` re-arms the watchdog after this long */
  continueRearmMs: number;
}

export const DEFAULT_SILENCE_POLICY: SilencePolicy = {
  suspiciousAfterMs: 5 * 60_000,
  criticalAfterMs: 15 * 60_000,
  continueRearmMs: 30 * 60_000,
};

/**
 * How silent a running run is. Information only: no level ever cancels or wakes anything. A
 * `dismiss` silences the run for good; `snooze` and `continue` until their time passes.
 */
export function silenceLevel(
  now: Date,
  lastSign: Date | null,
  startedAt: Date,
  decision: { kind: SilenceDecision | null; until: Date | null },
  policy: SilencePolicy,
): SilenceLevel {
  if (decision.kind === 'dismiss') return 'ok';
  if (decision.until && decision.until > now) return 'ok';
  const silentForMs = now.getTime() - (lastSign ?? startedAt).getTime();
  if (silentForMs >= policy.criticalAfterMs) return 'critical';
  if (silentForMs >= policy.suspiciousAfterMs) return 'suspicious';
  return 'ok';
}
