/**
 * The reviewed stop: a review's disposition makes its stop the reviewed one, accepted for good or only until its
 * `recheckAfter` (issue 29, item 1); an evaluation that finds that stop again re-checks or escalates it when due.
 */
import { logSystemActivity } from '../db/activity-log';
import { recheckDecision } from '../domain/watchdog-recheck';
import type { Classification } from '../domain/watchdog';
import type { Deps } from '../runtime/deps';
import { escalateReviewedStop } from './escalation';
import { triggerReview } from './review-wake';
import type { WatchdogSnapshot } from './subtree-snapshot';

type Acceptance = Pick<WatchdogSnapshot, 'acceptedUntilMs' | 'recheckCount' | 'escalatedFingerprint'>;

/**
 * The pending review reached a disposition: its stop becomes the reviewed one, with the leaves it saw (a later stop
 * made only of them is not new: shrink-only) and its acceptance. A different stop than the last reviewed one starts
 * with no re-checks spent and no escalation. Returns the acceptance now in force.
 */
export async function recordReviewDisposition(
  deps: Deps,
  watchdog: WatchdogSnapshot,
  review: { id: string; status: string },
): Promise<Acceptance> {
  return deps.db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<(Acceptance & { acceptedUntil: Date | null })[]>`
      UPDATE "Watchdog" SET "lastReviewedFingerprint" = "pendingReviewFingerprint",
        "reviewedLeafDigests" = "pendingReviewLeafDigests", "pendingReviewFingerprint" = NULL,
        "pendingReviewLeafDigests" = '{}', "acceptedUntil" = "pendingRecheckAfter", "pendingRecheckAfter" = NULL,
        "recheckCount" = CASE WHEN "pendingReviewFingerprint" IS DISTINCT FROM "lastReviewedFingerprint"
          THEN 0 ELSE "recheckCount" END,
        "escalatedFingerprint" = CASE WHEN "pendingReviewFingerprint" IS DISTINCT FROM "lastReviewedFingerprint"
          THEN NULL ELSE "escalatedFingerprint" END,
        "updatedAt" = now()
      WHERE id = ${watchdog.id}::uuid
      RETURNING "acceptedUntil", round(date_part('epoch', "acceptedUntil") * 1000)::float8 AS "acceptedUntilMs",
        "recheckCount", "escalatedFingerprint"`;
    if (!row) return watchdog; // deleted with its issue: the evaluation finds it removed next time
    await logSystemActivity(tx, watchdog.companyId, {
      action: 'issue.task_watchdog_fingerprint_reviewed',
      entityType: 'issue',
      entityId: watchdog.issueId,
      details: {
        watchdogId: watchdog.id,
        reviewIssueId: review.id,
        reviewedFingerprint: watchdog.pendingReviewFingerprint,
        reviewIssueStatus: review.status,
        recheckAfter: row.acceptedUntil?.toISOString() ?? null,
      },
    });
    return {
      acceptedUntilMs: row.acceptedUntilMs,
      recheckCount: row.recheckCount,
      escalatedFingerprint: row.escalatedFingerprint,
    };
  });
}

/** What an evaluation concludes of a stop whose fingerprint is the reviewed one. */
export type ReviewedStopOutcome =
  | { state: 'already_reviewed'; recheckAt?: string }
  | { state: 'escalated' }
  | { state: 'review_running' }
  /** removed since the evaluation read it: nothing was woken */
  | { state: 'removed' }
  | { state: 'stopped'; woke: boolean; reviewIssueId: string };

/**
 * Accepted (for good, or until its re-check), re-checked (the agent woken again) or escalated. An observe-mode
 * watchdog wakes nobody: a due re-check of a stop reviewed before it was switched escalates at once.
 */
export async function evaluateReviewedStop(
  deps: Deps,
  watchdog: WatchdogSnapshot,
  result: Classification,
  now: Date,
): Promise<ReviewedStopOutcome> {
  const { acceptedUntilMs, recheckCount, repeatLimit, escalatedFingerprint } = watchdog;
  const acceptedUntil = acceptedUntilMs === null ? null : new Date(acceptedUntilMs);
  const decision = recheckDecision(
    result.fingerprint!,
    { acceptedUntil, recheckCount, repeatLimit, escalatedFingerprint },
    now,
  );
  if (decision.kind === 'reviewed') return { state: 'already_reviewed' };
  if (decision.kind === 'accepted') return { state: 'already_reviewed', recheckAt: decision.recheckAt.toISOString() };
  if (decision.kind === 'recheck' && watchdog.mode === 'review') {
    const trigger = await triggerReview(deps, watchdog.id, result, decision.number);
    if (trigger.kind === 'review_running') return { state: 'review_running' };
    if (trigger.kind === 'watchdog_removed') return { state: 'removed' };
    return { state: 'stopped', woke: trigger.woke, reviewIssueId: trigger.reviewIssueId };
  }
  if (decision.kind !== 'escalated') await escalateReviewedStop(deps, watchdog, result);
  return { state: 'escalated' };
}
