/**
 * @module Which recorded changes reach a watchdog (domain/change-reach.ts): a run's start or end on a review task
 * reaches no watchdog's verdict, except a run's end on a watchdog's own review task while it awaits that review's end.
 */
import { changeReach, roundReach, type ChangedIssue } from '../../domain/change-reach';
import { TASK_WATCHDOG_ORIGIN } from '../../domain/statuses';

const watchdog = { issueId: 'root', reviewIssueId: 'review' };
const issue = (id: string, originKind: string | null, ...reasons: string[]): ChangedIssue => ({
  id,
  originKind,
  reasons: new Set(reasons),
});

test('every change of an issue that is not a review task reaches the watchdog above it', () => {
  for (const reason of ['run_started', 'run_finished', 'issue_updated', 'interaction_created'])
    expect(changeReach(watchdog, issue('leaf', null, reason))).toBe('signal');
});

test("a run's start on a review task reaches no watchdog; its end reaches its own only if it awaits the review", () => {
  expect(changeReach(watchdog, issue('review', TASK_WATCHDOG_ORIGIN, 'run_started'))).toBe('none');
  expect(changeReach(watchdog, issue('review', TASK_WATCHDOG_ORIGIN, 'run_finished'))).toBe('if_awaiting_review_end');
  expect(changeReach(watchdog, issue('review', TASK_WATCHDOG_ORIGIN, 'run_started', 'run_finished'))).toBe(
    'if_awaiting_review_end',
  );
  // another watchdog's review task, below this one's issue: left out of its walk
  expect(changeReach(watchdog, issue('other-review', TASK_WATCHDOG_ORIGIN, 'run_finished'))).toBe('none');
});

test("any other change of a review task, and a review task's runs when it is the watched issue, still reach", () => {
  // the disposition: the review task's status or assignee
  expect(changeReach(watchdog, issue('review', TASK_WATCHDOG_ORIGIN, 'issue_updated'))).toBe('signal');
  expect(changeReach(watchdog, issue('review', TASK_WATCHDOG_ORIGIN, 'run_finished', 'issue_updated'))).toBe('signal');
  const onReviewTask = { issueId: 'review', reviewIssueId: null };
  expect(changeReach(onReviewTask, issue('review', TASK_WATCHDOG_ORIGIN, 'run_started'))).toBe('signal');
});

test("a round reaches a watchdog as far as the widest of its changes' reaches", () => {
  const start = issue('review', TASK_WATCHDOG_ORIGIN, 'run_started');
  const end = issue('review', TASK_WATCHDOG_ORIGIN, 'run_finished');
  expect(roundReach(watchdog, [start])).toBe('none');
  expect(roundReach(watchdog, [start, { ...end, id: 'review' }])).toBe('if_awaiting_review_end');
  expect(roundReach(watchdog, [start, issue('leaf', null, 'issue_updated')])).toBe('signal');
  expect(roundReach(watchdog, [])).toBe('none');
});
