/**
 * Which recorded changes can change a watchdog's verdict (issue 45): the change dispatcher signals a watchdog only for
 * those, so a waking change's own review run does not cost its watchdog two more workflow tasks and evaluations.
 *
 * A review task (origin `task_watchdog`) is left out of every watchdog's walk below its watched issue
 * (watchdogs/subtree-snapshot.ts), so a run starting or ending on it changes no classification. It matters only to
 * the watchdog whose review task it is, through whether a review is live (watchdogs/review-wake.ts): a run that
 * starts was queued, live already; a run that ends makes the review not live, which matters only while that
 * watchdog holds back a new stop for it (its last evaluation `review_running`, recorded under the watchdog's lock by
 * the evaluation that held it back).
 */
import { TASK_WATCHDOG_ORIGIN } from './statuses';

/** The reasons a run's start and end record on its issue (dispatch/begin.ts, runs/runs.ts). */
const RUN_STARTED = 'run_started';
const RUN_FINISHED = 'run_finished';

/** How far a round's changes reach one watchdog: signal it, signal it only if it awaits its review's end, or not. */
export type ChangeReach = 'signal' | 'if_awaiting_review_end' | 'none';

/** The last evaluation's state that holds a new stop back until the review run ends. */
export const AWAITING_REVIEW_END_STATE = 'review_running';

export interface ReachedWatchdog {
  /** the watched issue */
  issueId: string;
  reviewIssueId: string | null;
}

export interface ChangedIssue {
  id: string;
  /** the changed issue's origin kind (`task_watchdog` for a review task) */
  originKind: string | null;
  /** the reasons recorded for it in this round */
  reasons: ReadonlySet<string>;
}

/** How one changed issue at or below `watchdog`'s issue reaches it. */
export function changeReach(watchdog: ReachedWatchdog, issue: ChangedIssue): ChangeReach {
  // the watched issue itself is always walked, whatever its origin
  if (issue.originKind !== TASK_WATCHDOG_ORIGIN || issue.id === watchdog.issueId) return 'signal';
  if ([...issue.reasons].some((r) => r !== RUN_STARTED && r !== RUN_FINISHED)) return 'signal';
  return issue.id === watchdog.reviewIssueId && issue.reasons.has(RUN_FINISHED) ? 'if_awaiting_review_end' : 'none';
}

/** The reach of all of a round's changes below one watchdog: the widest of theirs. */
export function roundReach(watchdog: ReachedWatchdog, issues: readonly ChangedIssue[]): ChangeReach {
  const reaches = issues.map((issue) => changeReach(watchdog, issue));
  if (reaches.includes('signal')) return 'signal';
  return reaches.includes('if_awaiting_review_end') ? 'if_awaiting_review_end' : 'none';
}
