/**
 * Liveness recovery (issue 44, item 5; seed 000's third mechanism beside the task watchdog and the silent-run
 * watchdog): an agent-owned `in_progress` issue with no live path for longer than TREEWARDEN_LIVENESS_STALL_MS is
 * stalled work, found by a periodic scan, and its assignee is woken once per stall. Pure: liveness/recovery.ts reads
 * the facts (the live paths are ruled out by its query) and writes what this decides.
 */

/** What one pass did (the schedule's workflow returns it: the Temporal UI shows it). */
export interface LivenessPass {
  /** idle issues past the threshold that were looked at */
  idle: number;
  recovered: number;
  stoodDown: number;
  /** due, but past their company's share of this pass: the next pass takes them */
  paced: number;
  /** wakes queued for over a minute outside any hold (their dispatcher died), dispatched again */
  redispatched: number;
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
  | { kind: 'not_yet' };

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
  if (stalledForMs < stallMs) return { kind: 'not_yet' };
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
