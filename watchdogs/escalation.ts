/**
 * The escalation of a reviewed stop whose conditional acceptances ran out (issue 29, item 1): the watchdog stops
 * waking its agent for it and asks people instead, once per stop. A human-only interaction on the watched issue
 * (excluded from the fingerprint, so it is no new stop) and the `watchdog_escalated` notification of its audit record.
 */
import { logSystemActivity } from '../db/activity-log';
import { ESCALATION_INTERACTION_KIND } from '../domain/watchdog-recheck';
import type { Classification } from '../domain/watchdog';
import type { Deps } from '../runtime/deps';
import type { WatchdogSnapshot } from './subtree-snapshot';

/** Escalates the reviewed stop `result`; a repeat (or a racing evaluation) finds it escalated and writes nothing. */
export async function escalateReviewedStop(
  deps: Deps,
  watchdog: WatchdogSnapshot,
  result: Classification,
): Promise<void> {
  const fingerprint = result.fingerprint!;
  await deps.db.$transaction(async (tx) => {
    // the acceptance is spent either way: a safety tick must not find it due again
    const count = await tx.$executeRaw`
      UPDATE "Watchdog" SET "escalatedFingerprint" = ${fingerprint}, "acceptedUntil" = NULL, "updatedAt" = now()
      WHERE id = ${watchdog.id}::uuid AND status = 'active' AND "lastReviewedFingerprint" = ${fingerprint}
        AND "escalatedFingerprint" IS DISTINCT FROM ${fingerprint}`;
    if (count === 0) return;
    const interaction = await tx.interaction.create({
      data: {
        companyId: watchdog.companyId,
        issueId: watchdog.issueId,
        kind: ESCALATION_INTERACTION_KIND,
        audience: 'human_only',
        createdByKind: 'system',
      },
    });
    await logSystemActivity(tx, watchdog.companyId, {
      action: 'issue.task_watchdog_escalated',
      entityType: 'issue',
      entityId: watchdog.issueId,
      details: {
        watchdogId: watchdog.id,
        stopFingerprint: fingerprint,
        interactionId: interaction.id,
        reviewIssueId: watchdog.reviewIssueId,
        recheckCount: watchdog.recheckCount,
        repeatLimit: watchdog.repeatLimit,
        stoppedLeaves: result.stoppedLeaves.map((l) => l.id),
      },
    });
  });
}
