/**
 * A watchdog review run's authority, derived on every request from the server's own rows (issue 24): the run's
 * `reviewWatchdogId`, `reviewFingerprint` and `selfReview`, written when the watchdog woke it, and the watchdog row as
 * it is now. Nothing a caller wrote (a wake's context, a file) takes part.
 */
import { watchdogMayAct } from './watchdog';
import type { WatchdogScope } from './actor';

export interface ReviewRunFacts {
  agentId: string;
  /** the run's issue: its review task, or for a self-mode verification the stopped leaf itself */
  issueId: string;
  reviewFingerprint: string;
  /** woken by a self-mode watchdog: the contract covers the run's own issue and its subtree, not the watched one */
  selfReview: boolean;
}

export interface WatchdogFacts {
  id: string;
  issueId: string;
  agentId: string;
  mode: string;
  status: string;
  reviewIssueId: string | null;
  incompleteIssueIds: string[];
}

/** Why the review run's authority is gone, or null while the watchdog still stands behind it unchanged. */
export function revocationOf(run: ReviewRunFacts, watchdog: WatchdogFacts | null): string | null {
  if (!watchdog) return 'its watchdog no longer exists';
  if (!watchdogMayAct(watchdog)) return 'its watchdog was removed';
  // a self-mode verification is its leaf's assignee's: neither the watchdog's agent nor its review task names it
  if (run.selfReview) return watchdog.mode === 'self' ? null : 'its watchdog no longer lets stopped leaves verify';
  if (watchdog.agentId !== run.agentId) return 'its watchdog was reassigned to another agent';
  if (watchdog.reviewIssueId !== run.issueId) return "its review task is no longer the watchdog's";
  return null;
}

/** The scope a review run acts under; a revoked one keeps its facts (for refusals and the audit) and no rights. */
export function reviewScope(run: ReviewRunFacts, watchdogId: string | null, watchdog: WatchdogFacts | null) {
  const scope: WatchdogScope = {
    watchdogId: watchdog?.id ?? watchdogId ?? '',
    // a self-mode verification reviews its own leaf's subtree, and the leaf is its "review task"
    watchedIssueId: run.selfReview ? run.issueId : (watchdog?.issueId ?? ''),
    reviewIssueId: run.issueId,
    fingerprint: run.reviewFingerprint,
    incompleteIssueIds: watchdog?.incompleteIssueIds ?? [],
    revoked: revocationOf(run, watchdog),
  };
  return scope;
}
