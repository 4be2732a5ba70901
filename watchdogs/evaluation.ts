/**
 * Task watchdog evaluation (run as an activity): classify the watched subtree and, for a new stop,
 * ensure one review task and one wake (review mode), record it (observe mode) or wake its leaves' assignees (self).
 */
import {
  classifySubtree,
  isReviewDisposition,
  isShrinkOnly,
  leafDigests,
  type Classification,
  type EvaluationSummary,
  watchdogMayAct,
} from '../domain/watchdog';
import { logSystemActivity } from '../db/activity-log';
import { loadEvaluationInput, type WatchdogSnapshot } from './subtree-snapshot';
import type { Deps } from '../runtime/deps';
import { logStopTriggered, triggerReview } from './review-wake';
import { evaluateReviewedStop, recordReviewDisposition } from './reviewed-stop';
import { wakeStoppedLeaves } from './self-wake';

/** What an evaluation adds to its verdict: whether it woke the agent, on which review task, when it looks again. */
type Outcome = { woke?: boolean; reviewIssueId?: string | null; recheckAt?: string | null };

/**
 * Evaluates one watchdog and, for a new stop, ensures one review task and one wake. Safe to
 * repeat: the review task is reused and the wake carries the key task_watchdog:<id>:<fingerprint>.
 */
export async function evaluateWatchdog(deps: Deps, watchdogId: string): Promise<EvaluationSummary> {
  const { watchdog, review, nodes } = await loadEvaluationInput(deps.db, watchdogId);
  const evaluatedAt = new Date();
  const base = {
    watchdogId,
    includedCount: 0,
    stoppedLeafCount: 0,
    liveIssueIds: [],
    incompleteIssueIds: [],
    woke: false,
    reviewIssueId: watchdog?.reviewIssueId ?? null,
    evaluatedAt: evaluatedAt.toISOString(),
  };
  if (!watchdogMayAct(watchdog)) {
    return {
      ...base,
      state: 'removed',
      fingerprint: null,
      lastReviewedFingerprint: watchdog?.lastReviewedFingerprint ?? null,
    };
  }
  let lastReviewed = watchdog.lastReviewedFingerprint;
  let current = watchdog;
  if (
    review &&
    watchdog.pendingReviewFingerprint &&
    isReviewDisposition(review.status, review.assigneeAgentId, watchdog.agentId)
  ) {
    lastReviewed = watchdog.pendingReviewFingerprint;
    current = { ...watchdog, ...(await recordReviewDisposition(deps, watchdog, review)) };
  }
  const result = classifySubtree(
    nodes,
    { agentId: watchdog.agentId, instructions: watchdog.instructions },
    evaluatedAt,
    deps.config.TREEWARDEN_FIRST_RUN_GRACE_MS,
  );
  const summary = (
    state: EvaluationSummary['state'],
    { woke = false, reviewIssueId = watchdog.reviewIssueId, recheckAt = result.firstRunGraceEndsAt }: Outcome = {},
  ): EvaluationSummary => ({
    ...base,
    state,
    fingerprint: result.fingerprint,
    lastReviewedFingerprint: lastReviewed,
    includedCount: result.includedCount,
    stoppedLeafCount: result.stoppedLeaves.length,
    liveIssueIds: result.liveIssueIds,
    incompleteIssueIds: result.incompleteIssueIds,
    woke,
    reviewIssueId,
    ...(recheckAt ? { recheckAt } : {}),
  });
  await recordIncompleteness(deps, watchdog, result);
  if (result.state !== 'stopped') return persist(deps, watchdog, summary(result.state));
  const reviewedStop = async () => {
    const { state, ...outcome } = await evaluateReviewedStop(deps, current, result, evaluatedAt);
    return persist(deps, watchdog, summary(state, outcome));
  };
  if (result.fingerprint === lastReviewed) return reviewedStop();
  // the last evaluation saw this very stop against the same reviewed one: it was not shrink-only then either
  const seenBefore =
    result.fingerprint === watchdog.lastObservedFingerprint && lastReviewed === watchdog.lastReviewedFingerprint;
  if (lastReviewed && !seenBefore && (await acceptShrunkStop(deps, watchdog, lastReviewed, result))) {
    lastReviewed = result.fingerprint;
    return reviewedStop();
  }
  if (watchdog.mode === 'observe') {
    await recordObservedStop(deps, watchdog, result);
    return persist(deps, watchdog, summary('observed'), result.fingerprint);
  }
  if (watchdog.mode === 'self') {
    const woke = await wakeStoppedLeaves(deps, watchdogId, result);
    return persist(deps, watchdog, summary('stopped', { woke, reviewIssueId: null }), result.fingerprint);
  }
  const trigger = await triggerReview(deps, watchdogId, result);
  // removed since this evaluation read it: nothing is woken, and the workflow ends as for a removal it saw
  if (trigger.kind === 'watchdog_removed') return summary('removed');
  if (trigger.kind === 'review_running') return persist(deps, watchdog, summary('review_running'), result.fingerprint);
  return persist(deps, watchdog, summary('stopped', trigger), result.fingerprint);
}

/**
 * Observe mode (seed 001's classifier): a new stop is recorded, with its notification, once per fingerprint, and
 * nobody is woken. Switching the watchdog to review mode later wakes its agent for the stop then current.
 */
async function recordObservedStop(deps: Deps, watchdog: WatchdogSnapshot, result: Classification) {
  const fingerprint = result.fingerprint!;
  await deps.db.$transaction(async (tx) => {
    // the evaluation that first sees this stop records it; a repeat (or a racing evaluation) finds it recorded
    const { count } = await tx.watchdog.updateMany({
      where: {
        id: watchdog.id,
        status: 'active',
        OR: [{ lastObservedFingerprint: null }, { lastObservedFingerprint: { not: fingerprint } }],
      },
      data: { lastObservedFingerprint: fingerprint, triggerCount: { increment: 1 }, lastTriggeredAt: new Date() },
    });
    if (count === 0) return;
    await logStopTriggered(tx, watchdog, result, { mode: 'observe', reviewIssueId: null });
  });
}

/**
 * A stop made only of leaves the last review saw, unchanged (issue 29, item 3): nobody is woken, and it becomes the
 * reviewed stop (audited `issue.task_watchdog_stop_shrank`). The reviewed leaves are read only here, not by every
 * evaluation: on a 10,000-leaf subtree they are most of the watchdog row.
 */
async function acceptShrunkStop(
  deps: Deps,
  watchdog: WatchdogSnapshot,
  lastReviewed: string,
  result: Classification,
): Promise<boolean> {
  const digests = leafDigests(result.stoppedLeaves, { agentId: watchdog.agentId, instructions: watchdog.instructions });
  // read outside the transaction, which only a shrink-only stop opens (most stops are new): the digests change only
  // with the reviewed fingerprint, which the update below is conditional on
  const row = await deps.db.watchdog.findUnique({
    where: { id: watchdog.id, lastReviewedFingerprint: lastReviewed },
    select: { reviewedLeafDigests: true },
  });
  if (!row || !isShrinkOnly(digests, row.reviewedLeafDigests)) return false;
  return deps.db.$transaction(async (tx) => {
    // conditional on the reviewed stop still being the one compared against (a racing evaluation, a new review)
    const { count } = await tx.watchdog.updateMany({
      where: { id: watchdog.id, status: 'active', lastReviewedFingerprint: lastReviewed },
      data: { lastReviewedFingerprint: result.fingerprint, reviewedLeafDigests: digests },
    });
    if (count === 0) return false;
    await logSystemActivity(tx, watchdog.companyId, {
      action: 'issue.task_watchdog_stop_shrank',
      entityType: 'issue',
      entityId: watchdog.issueId,
      details: {
        watchdogId: watchdog.id,
        reviewedFingerprint: lastReviewed,
        stopFingerprint: result.fingerprint,
        stoppedLeaves: result.stoppedLeaves.map((l) => l.id),
        leftLeafCount: row.reviewedLeafDigests.length - digests.length,
      },
    });
    return true;
  });
}

/**
 * Records the evaluation, and the change version it read: until a recorded change bumps that version again, a
 * safety tick has nothing to evaluate (`watchdogChangedSinceEvaluation`).
 */
async function persist(deps: Deps, watchdog: WatchdogSnapshot, summary: EvaluationSummary, observed?: string | null) {
  await deps.db.watchdog.updateMany({
    where: { id: watchdog.id, status: 'active' },
    data: {
      lastEvaluation: summary as unknown as object,
      evaluatedChangeVersion: watchdog.changeVersion,
      ...(observed ? { lastObservedFingerprint: observed } : {}),
    },
  });
  return summary;
}

/** Warn once when an issue first becomes incomplete; again only after it was complete in between. */
async function recordIncompleteness(
  deps: Deps,
  watchdog: { id: string; issueId: string; incompleteIssueIds: string[] },
  result: Classification,
) {
  const previous = new Set(watchdog.incompleteIssueIds);
  const fresh = result.incompleteIssueIds.filter((id) => !previous.has(id));
  const same = fresh.length === 0 && previous.size === result.incompleteIssueIds.length;
  if (same) return;
  if (fresh.length > 0) {
    deps.log.warn(
      { watchdogId: watchdog.id, watchedIssueId: watchdog.issueId, newlyIncompleteIssueIds: fresh },
      'watchdog subtree deeper than 100 levels: evaluation incomplete, no review dispatched',
    );
  }
  await deps.db.watchdog.update({
    where: { id: watchdog.id },
    data: { incompleteIssueIds: result.incompleteIssueIds },
  });
}

/**
 * The safety tick's question, one statement: has a recorded change reached this watchdog since its last evaluation
 * (or is it no longer active, which an evaluation reports as removed), or is its reviewed stop's re-check due? The
 * re-check's timer ends in such a tick; a re-check or an escalation clears `acceptedUntil`, so it is due once.
 */
export async function watchdogChangedSinceEvaluation(deps: Deps, watchdogId: string): Promise<boolean> {
  // due by the clock the evaluation decides by (the worker's), in epoch milliseconds as the evaluation reads it; no
  // acceptedUntil is no re-check (a bare comparison with NULL would make every tick look changed)
  const [row] = await deps.db.$queryRaw<{ changed: boolean }[]>`
    SELECT ("changeVersion" <> "evaluatedChangeVersion" OR status <> 'active'
      OR COALESCE(date_part('epoch', "acceptedUntil") * 1000 <= ${Date.now()}, false)) AS changed
    FROM "Watchdog" WHERE id = ${watchdogId}::uuid`;
  return row?.changed ?? true;
}
