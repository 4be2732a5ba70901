/**
 * A one-shot monitor on an issue (issue 44, item 6; seed 000's **Monitor** row): one durable check that wakes the
 * issue's assignee once at its time, with reason `issue_monitor` and its note. A new PUT refreshes it (a new time, a
 * new version); it ends when it fires, when it is deleted, or at its time when the issue is done or cancelled. A
 * pending monitor is a waiting path: a watchdog does not count its issue as stopped.
 */
/** The wake reason a monitor's wake carries. */
export const ISSUE_MONITOR_WAKE_REASON = 'issue_monitor';

/** The earliest and latest time a monitor may be set for, from the moment it is written (as `recheckAfter`). */
export const MONITOR_AT_MIN_MS = 1_000;
export const MONITOR_AT_MAX_MS = 90 * 24 * 60 * 60 * 1000;
export const MONITOR_NOTE_MAX = 2_000;

/** Why `at` is refused, or null when it is within its bounds. */
export function monitorAtProblem(at: Date, now: Date): string | null {
  const aheadMs = at.getTime() - now.getTime();
  if (aheadMs < MONITOR_AT_MIN_MS) return 'at: must be at least 1 second in the future';
  if (aheadMs > MONITOR_AT_MAX_MS) return 'at: must be at most 90 days in the future';
  return null;
}

/** What a monitor's workflow waits for: the time, and the version of the row that set it. */
export interface MonitorSchedule {
  /** ISO-8601 */
  at: string;
  version: number;
}

/** What firing a monitor found: it woke the assignee, it had ended, or a newer version stands (or none). */
export type MonitorFiring =
  | { kind: 'fired'; wakeId: string }
  | { kind: 'ended'; reason: 'issue_closed' | 'no_assignee' }
  | { kind: 'superseded'; current: MonitorSchedule | null };

export const ISSUE_MONITOR_STATUSES = ['pending', 'fired', 'ended', 'cleared'] as const;
export type IssueMonitorStatus = (typeof ISSUE_MONITOR_STATUSES)[number];
