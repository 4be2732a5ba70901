/**
 * Liveness recovery (issue 44, item 5; seed 000's third mechanism beside the task watchdog and the silent-run
 * watchdog): an agent-owned `in_progress` issue with no live path for longer than TREEWARDEN_LIVENESS_STALL_MS is
 * stalled work, and its assignee is woken once per stall. A pass runs when the next idle issue falls due (the
 * `liveness-watch` workflow's timer, moved by the changes that can end a live path) and on a slow periodic safety
 * scan. Pure: liveness/recovery.ts reads the facts (the live paths are ruled out by its query) and writes what this
 * decides.
 */

/** What one pass did (the schedule's workflow returns it: the Temporal UI shows it). */
export interface LivenessPass {
  /** issues with no live path that were looked at, stalled or not yet */
  idle: number;
  recovered: number;
  stoodDown: number;
  /** due, but past their company's share of this pass: the next pass takes them */
  paced: number;
  /** wakes queued for over a minute outside any hold (their dispatcher died), dispatched again */
  redispatched: number;
  /** when the next pass is owed (`nextPassInMs`), or null: no idle issue falls due later */
  nextPassInMs: number | null;
}

/** A company paced out of a pass gets its next share this much later. */
export const RECOVERY_PACE_MS = 60_000;

/** Passes are at least this far apart: an issue falling due a few milliseconds later waits for the next. */
const MIN_PASS_GAP_MS = 1_000;

/**
 * The changes (changes/record.ts reasons) after which an issue may have no live path left: a run ended, a person
 * changed the issue, a hold was released, an interaction, an execution blocker or a monitor ended. The change
 * dispatcher tells the liveness watch after a round with any of them.
 */
const LIVE_PATH_ENDING_CHANGES: ReadonlySet<string> = new Set([
  'issue_created',
  'issue_updated',
  'run_finished',
  'tree_hold_released',
  'interaction_resolved',
  'execution_blocker_resolved',
  'monitor_cleared',
  'monitor_fired',
  'monitor_ended',
]);

export const mayEndALivePath = (reason: string): boolean => LIVE_PATH_ENDING_CHANGES.has(reason);

/**
 * How often one worker tells the liveness watch at most: a notice moves the watch's next pass to the notice's time
 * plus the stall threshold, and that pass finds every issue idle by then; a change inside the interval gets the
 * interval's trailing notice, so a stall is recovered at most this late. A sixtieth of the threshold, between a
 * second and half a minute: 30 s for the default half hour, two signals a minute on a busy fleet, not one a second.
 */
export function livenessNoticeIntervalMs(stallMs: number): number {
  return Math.min(30_000, Math.max(1_000, Math.round(stallMs / 60)));
}

/** The wake reason of a recovery's wake. */
export const LIVENESS_RECOVERY_WAKE_REASON = 'liveness_recovery';

/** The stop kinds that are an operator's decision: work a person stopped stays stopped (seed 002). */
const OPERATOR_STOP_KINDS = ['operator_stop', 'operator_hold'];

/** An issue with no live path (no live run, queued wake, hold, pending interaction, execution blocker or monitor). */
export interface IdleIssue {
  issueId: string;
  companyId: string;
  assigneeAgentId: string;
  /** epoch ms: the last sign of work on it (its last change, its latest run's end or start, its latest wake) */
  lastActivityAtMs: number;
  latestRun: { id: string; status: string; stopKind: string | null; wakeReason: string } | null;
}

export type StallDecision =
  | { kind: 'recover'; stallKey: string; stalledForMs: number }
  | { kind: 'stand_down'; reason: 'operator_stop' | 'already_recovered' }
  /** idle, not stalled yet: it is in `inMs` */
  | { kind: 'not_yet'; inMs: number };

/**
 * Whether an idle issue is recovered now. A stall is identified by the issue's latest run (or its having none), so a
 * stall is recovered once however many scans see it. It stands down for a run an operator stopped, and for a stall
 * whose latest run was itself a recovery: that recovery did not restore a path, so a person decides, not a loop.
 */
export function decideStall(issue: IdleIssue, nowMs: number, stallMs: number): StallDecision {
  const run = issue.latestRun;
  if (run?.stopKind && OPERATOR_STOP_KINDS.includes(run.stopKind))
    return { kind: 'stand_down', reason: 'operator_stop' };
  if (run?.wakeReason === LIVENESS_RECOVERY_WAKE_REASON) return { kind: 'stand_down', reason: 'already_recovered' };
  const stalledForMs = nowMs - issue.lastActivityAtMs;
  if (stalledForMs < stallMs) return { kind: 'not_yet', inMs: stallMs - stalledForMs };
  return { kind: 'recover', stallKey: run ? `after-run:${run.id}` : 'never-run', stalledForMs };
}

/**
 * The recoveries of one pass: at most `perCompany` per company, the longest stalled first, so a company with a
 * thousand stalled issues is paced over passes and never starves another's.
 */
export function pacedRecoveries<T extends { companyId: string; stalledForMs: number }>(
  due: readonly T[],
  perCompany: number,
): T[] {
  const taken = new Map<string, number>();
  return [...due]
    .sort((a, b) => b.stalledForMs - a.stalledForMs)
    .filter((recovery) => {
      const count = taken.get(recovery.companyId) ?? 0;
      if (count >= perCompany) return false;
      taken.set(recovery.companyId, count + 1);
      return true;
    });
}

/**
 * When the pass after this one is owed: after the pacing interval while a company was paced or the pass could not
 * read every idle issue, else when the first idle issue not yet stalled falls due; null when none is waiting (the
 * next change that can end a live path, or the safety scan, brings the next pass).
 */
export function nextPassInMs(
  decisions: readonly StallDecision[],
  pass: { paced: number; truncated: boolean },
): number | null {
  if (pass.paced > 0 || pass.truncated) return RECOVERY_PACE_MS;
  let soonest: number | null = null;
  for (const decision of decisions)
    if (decision.kind === 'not_yet') soonest = Math.min(soonest ?? Infinity, decision.inMs);
  return soonest === null ? null : Math.max(MIN_PASS_GAP_MS, soonest);
}
