/**
 * @module Unit: a review run's authority comes from its watchdog row as it stands now (domain/review-authority.ts),
 * and is revoked, with the reason, when that row is gone, disabled, reassigned or has another review task; a self-mode
 * verification's scope is its own leaf, and it holds while its watchdog is active in self mode.
 */
import { reviewScope, type ReviewRunFacts, type WatchdogFacts } from '../../domain/review-authority';

const run: ReviewRunFacts = {
  agentId: 'watcher',
  issueId: 'review-task',
  reviewFingerprint: 'fp-1',
  selfReview: false,
};
const watchdog: WatchdogFacts = {
  id: 'w1',
  issueId: 'root',
  agentId: 'watcher',
  mode: 'review',
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

describe('a self-mode verification', () => {
  const leafRun: ReviewRunFacts = {
    agentId: 'leaf-owner',
    issueId: 'leaf',
    reviewFingerprint: 'fp-1',
    selfReview: true,
  };
  const selfWatchdog: WatchdogFacts = { ...watchdog, mode: 'self', reviewIssueId: null };

  test("acts on its own leaf's subtree, though neither the watchdog's agent nor a review task names it", () => {
    expect(reviewScope(leafRun, 'w1', selfWatchdog)).toEqual({
      watchdogId: 'w1',
      watchedIssueId: 'leaf',
      reviewIssueId: 'leaf',
      fingerprint: 'fp-1',
      incompleteIssueIds: [],
      revoked: null,
    });
  });

  test.each([
    ['gone', null, 'its watchdog no longer exists'],
    ['disabled', { ...selfWatchdog, status: 'disabled' }, 'its watchdog was removed'],
    ['switched to review', { ...selfWatchdog, mode: 'review' }, 'its watchdog no longer lets stopped leaves verify'],
    ['switched to observe', { ...selfWatchdog, mode: 'observe' }, 'its watchdog no longer lets stopped leaves verify'],
  ])('a watchdog %s revokes it', (_name, row, reason) => {
    expect(reviewScope(leafRun, 'w1', row as WatchdogFacts | null).revoked).toBe(reason);
  });

  test('a review run is not a self-mode verification because its watchdog is now in self mode', () => {
    const scope = reviewScope(run, 'w1', { ...watchdog, mode: 'self' });
    expect([scope.watchedIssueId, scope.reviewIssueId, scope.revoked]).toEqual(['root', 'review-task', null]);
  });
});
