/** Fan-out of "something changed under you" to the watchdogs above the changed issues. */
import { watchdogsAbove } from '../issues/tree';
import type { Deps } from '../runtime/deps';

/**
 * Signals every active watchdog at or above `issueIds`. It runs after the write has committed, so
 * it never fails the write: a failed attempt (the database lookup or a signal) is retried in the
 * background with backoff, and the watchdog's safety tick repairs whatever is still lost.
 */
export async function notifySubtreeChanged(deps: Deps, issueIds: string[], reason: string): Promise<void> {
  if (await signalWatchdogsAbove(deps, issueIds, reason)) return;
  retryInBackground(deps, issueIds, reason, 0);
}

/** 1 s, 2 s, 4 s … 30 s: about four minutes in all, well inside the default 10-minute safety tick. */
const RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000, 30_000];

function retryInBackground(deps: Deps, issueIds: string[], reason: string, attempt: number) {
  if (attempt >= RETRY_DELAYS_MS.length) {
    deps.log.warn(
      { issueIds, reason, attempts: attempt + 1 },
      'subtreeChanged signal kept failing; the safety tick will catch up',
    );
    return;
  }
  // unref: a pending retry never holds a stopping process open (the safety tick covers it)
  setTimeout(() => {
    void signalWatchdogsAbove(deps, issueIds, reason).then((sent) => {
      if (!sent) retryInBackground(deps, issueIds, reason, attempt + 1);
    });
  }, RETRY_DELAYS_MS[attempt]).unref();
}

/** One attempt; true when every watchdog above was signalled. Never throws. */
async function signalWatchdogsAbove(deps: Deps, issueIds: string[], reason: string): Promise<boolean> {
  try {
    const watchdogs = await watchdogsAbove(deps.db, issueIds);
    const results = await Promise.allSettled(
      watchdogs.map((w) =>
        deps.orchestrator.subtreeChanged(
          { watchdogId: w.id, companyId: w.companyId, issueId: w.issueId, title: w.issue.title },
          reason,
        ),
      ),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length === 0) return true;
    deps.log.warn({ err: failed[0].reason, failed: failed.length, reason }, 'subtreeChanged signal failed; retrying');
  } catch (error) {
    deps.log.warn({ err: error, issueIds, reason }, 'finding the watchdogs to signal failed; retrying');
  }
  return false;
}
