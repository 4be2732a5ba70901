/**
 * @module Unit: a review run's authority comes from its watchdog row as it stands now (domain/review-authority.ts),
 * and is revoked, with the reason, when that row is gone, disabled, reassigned or has another review task.
 */
import { reviewScope, type ReviewRunFacts, type WatchdogFacts } from '../../domain/review-authority';

const run: ReviewRunFacts = { agentId: 'watcher', issueId: 'review-task', reviewFingerprint: 'fp-1' };
const watchdog: WatchdogFacts = {
  id: 'w1',
  issueId: 'root',
  agentId: 'watcher',
  status: 'active',
  reviewIssueId: 'review-task',
  incompleteIssueIds: [],
};

test('an unchanged active watchdog gives the scope of its own row', () => {
  expect(reviewScope(run, 'w1', watchdog)).toEqual({
    watchdogId: 'w1',
    watchedIssueId: 'root',
    reviewIssueId: 'review-task',
    fingerprint: 'fp-1',
    incompleteIssueIds: [],
    revoked: null,
  });
});

test.each([
  ['gone', null, 'its watchdog no longer exists'],
  ['disabled', { ...watchdog, status: 'disabled' }, 'its watchdog was removed'],
  ['reassigned', { ...watchdog, agentId: 'someone-else' }, 'its watchdog was reassigned to another agent'],
  ['another review task', { ...watchdog, reviewIssueId: 'other' }, "its review task is no longer the watchdog's"],
])('a watchdog %s revokes the run', (_name, row, reason) => {
  expect(reviewScope(run, 'w1', row as WatchdogFacts | null).revoked).toBe(reason);
});

test('the incompleteness of the last evaluation travels with the scope', () => {
  expect(reviewScope(run, 'w1', { ...watchdog, incompleteIssueIds: ['x'] }).incompleteIssueIds).toEqual(['x']);
});
