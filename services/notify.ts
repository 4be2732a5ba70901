/** Fan-out of "something changed under you" to the watchdogs above the changed issues. */
import { watchdogsAbove } from './tree';
import type { Deps } from './deps';

/**
 * Signals every active watchdog at or above `issueIds`. Best effort by design: a lost
 * signal is repaired by the watchdog's safety tick, so a Temporal outage never fails the write.
 */
export async function notifySubtreeChanged(deps: Deps, issueIds: string[], reason: string): Promise<void> {
  const watchdogs = await watchdogsAbove(deps.db, issueIds);
  await Promise.all(
    watchdogs.map(async (w) => {
      try {
        await deps.orchestrator.subtreeChanged(
          { watchdogId: w.id, companyId: w.companyId, issueId: w.issueId, title: w.issue.title },
          reason,
        );
      } catch (error) {
        deps.log.warn({ err: error, watchdogId: w.id, reason }, 'subtreeChanged signal failed; the safety tick will catch up');
      }
    }),
  );
}
