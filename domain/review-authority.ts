/**
 * A watchdog review run's authority, derived on every request from the server's own rows (issue 24): the run's
 * `reviewWatchdogId` and `reviewFingerprint`, written when the watchdog woke it, and the watchdog row as it is now.
 * Nothing a caller wrote (a wake's context, a file) takes part.
 */
import type { WatchdogScope } from './actor';

export interface ReviewRunFacts {
  agentId: string;
  /** the run's issue: its review task */
  issueId: string;
  reviewFingerprint: string;
}

export interface WatchdogFacts {
  id: string;
  issueId: string;
  agentId: string;
  status: string;
  reviewIssueId: string | null;
  incompleteIssueIds: string[];
}

/** Why the review run's authority is gone, or null while the watchdog still stands behind it unchanged. */
export function revocationOf(run: ReviewRunFacts, watchdog: WatchdogFacts | null): string | null {
  if (!watchdog) return 'its watchdog no longer exists';
  if (watchdog.status !== 'active') return 'its watchdog was removed';
  if (watchdog.agentId !== run.agentId) return 'its watchdog was reassigned to another agent';
  if (watchdog.reviewIssueId !== run.issueId) return "its review task is no longer the watchdog's";
  return null;
}

/** The scope a review run acts under; a revoked one keeps its facts (for refusals and the audit) and no rights. */
export function reviewScope(run: ReviewRunFacts, watchdogId: string | null, watchdog: WatchdogFacts | null) {
  const scope: WatchdogScope = {
    watchdogId: watchdog?.id ?? watchdogId ?? '',
    watchedIssueId: watchdog?.issueId ?? '',
    reviewIssueId: run.issueId,
    fingerprint: run.reviewFingerprint,
    incompleteIssueIds: watchdog?.incompleteIssueIds ?? [],
    revoked: revocationOf(run, watchdog),
  };
  return scope;
}
