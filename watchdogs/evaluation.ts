/**
 * Task watchdog evaluation (run as an activity): classify the watched subtree and, for a new stop,
 * ensure one review task and one wake.
 */
import type { Tx } from '../db/prisma';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import {
  classifySubtree,
  isReviewDisposition,
  WATCHDOG_ALLOWED_OPERATIONS,
  WATCHDOG_DEFAULT_MANDATE,
  WATCHDOG_DENIED_OPERATIONS,
  type Classification,
  type EvaluationSummary,
  type WatchdogMode,
} from '../domain/watchdog';
import { logSystemActivity } from '../db/activity-log';
import { loadEvaluationInput, type WatchdogSnapshot } from './subtree-snapshot';
import type { Deps } from '../runtime/deps';
import { createWake, dispatchWake } from '../runs/wakes';

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
  // a row deleted with its issue or company is as removed as a disabled one
  if (watchdog?.status !== 'active') {
    return {
      ...base,
      state: 'removed',
      fingerprint: null,
      lastReviewedFingerprint: watchdog?.lastReviewedFingerprint ?? null,
    };
  }
  let lastReviewed = watchdog.lastReviewedFingerprint;
  if (
    review &&
    watchdog.pendingReviewFingerprint &&
    isReviewDisposition(review.status, review.assigneeAgentId, watchdog.agentId)
  ) {
    lastReviewed = watchdog.pendingReviewFingerprint;
    await deps.db.$transaction(async (tx) => {
      await tx.watchdog.update({
        where: { id: watchdogId },
        data: { lastReviewedFingerprint: lastReviewed, pendingReviewFingerprint: null },
      });
      await logSystemActivity(tx, watchdog.companyId, {
        action: 'issue.task_watchdog_fingerprint_reviewed',
        entityType: 'issue',
        entityId: watchdog.issueId,
        details: {
          watchdogId,
          reviewIssueId: review.id,
          reviewedFingerprint: lastReviewed,
          reviewIssueStatus: review.status,
        },
      });
    });
  }
  const result = classifySubtree(
    nodes,
    { agentId: watchdog.agentId, instructions: watchdog.instructions },
    evaluatedAt,
    deps.config.TREEWARDEN_FIRST_RUN_GRACE_MS,
  );
  const summary = (
    state: EvaluationSummary['state'],
    woke = false,
    reviewIssueId = watchdog.reviewIssueId,
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
    ...(result.firstRunGraceEndsAt ? { recheckAt: result.firstRunGraceEndsAt } : {}),
  });
  await recordIncompleteness(deps, watchdog, result);
  if (result.state !== 'stopped') return persist(deps, watchdogId, summary(result.state));
  if (result.fingerprint === lastReviewed) return persist(deps, watchdogId, summary('already_reviewed'));
  if (watchdog.mode === 'observe') {
    await recordObservedStop(deps, watchdog, result);
    return persist(deps, watchdogId, summary('observed'), result.fingerprint);
  }
  const trigger = await triggerReview(deps, watchdogId, result);
  if (trigger.kind === 'review_running')
    return persist(deps, watchdogId, summary('review_running'), result.fingerprint);
  return persist(deps, watchdogId, summary('stopped', trigger.woke, trigger.reviewIssueId), result.fingerprint);
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

/** The audit record (and, through it, the `watchdog_stopped` notification) of a new stop. */
function logStopTriggered(
  tx: Tx,
  watchdog: { id: string; companyId: string; issueId: string },
  result: Classification,
  how: { mode: WatchdogMode; reviewIssueId: string | null; wakeRequestId?: string },
) {
  return logSystemActivity(tx, watchdog.companyId, {
    action: 'issue.task_watchdog_triggered',
    entityType: 'issue',
    entityId: watchdog.issueId,
    details: {
      source: 'task_watchdogs.evaluate',
      watchdogId: watchdog.id,
      stopFingerprint: result.fingerprint,
      stoppedLeaves: result.stoppedLeaves.map((l) => l.id),
      ...how,
    },
  });
}

async function persist(deps: Deps, watchdogId: string, summary: EvaluationSummary, observed?: string | null) {
  await deps.db.watchdog.updateMany({
    where: { id: watchdogId, status: 'active' },
    data: { lastEvaluation: summary as unknown as object, ...(observed ? { lastObservedFingerprint: observed } : {}) },
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
 * The review run is live while its wake is queued or a run on the review task is queued, running
 * or waiting to retry. Seed 000: only one review is ever live, so a new stop waits for it to end.
 */
async function reviewRunLive(tx: Tx, reviewIssueId: string | null): Promise<boolean> {
  if (!reviewIssueId) return false;
  const [runs, wakes] = await Promise.all([
    tx.run.count({ where: { issueId: reviewIssueId, status: { in: ['queued', 'running', 'scheduled_retry'] } } }),
    tx.wakeRequest.count({ where: { issueId: reviewIssueId, status: 'queued' } }),
  ]);
  return runs + wakes > 0;
}

type TriggerOutcome = { kind: 'review_running' } | { kind: 'triggered'; woke: boolean; reviewIssueId: string };

async function triggerReview(deps: Deps, watchdogId: string, result: Classification): Promise<TriggerOutcome> {
  const fingerprint = result.fingerprint!;
  const outcome = await deps.db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT 1 FROM "Watchdog" WHERE id = ${watchdogId}::uuid FOR UPDATE`;
    const watchdog = await tx.watchdog.findUniqueOrThrow({
      where: { id: watchdogId },
      include: { issue: true, reviewIssue: true },
    });
    // Under the watchdog's lock, so no two evaluations can both see "no review live".
    if (await reviewRunLive(tx, watchdog.reviewIssueId)) return null;
    const reviewIssue = await ensureReviewIssue(tx, watchdog);
    const directive = {
      taskWatchdog: {
        watchdogId,
        watchedIssueId: watchdog.issueId,
        reviewIssueId: reviewIssue.id,
        fingerprint,
        stoppedLeaves: result.stoppedLeaves,
        mandate: WATCHDOG_DEFAULT_MANDATE,
        instructions: watchdog.instructions,
        capabilities: {
          watchedRootIssueId: watchdog.issueId,
          reviewIssueId: reviewIssue.id,
          excludedOriginKinds: [TASK_WATCHDOG_ORIGIN],
          allowed: WATCHDOG_ALLOWED_OPERATIONS,
          denied: WATCHDOG_DENIED_OPERATIONS,
        },
      },
    };
    const wake = await createWake(tx, {
      companyId: watchdog.companyId,
      agentId: watchdog.agentId,
      issueId: reviewIssue.id,
      reason: 'task_watchdog_stopped_subtree',
      directive,
      review: { watchdogId, fingerprint },
      idempotencyKey: `task_watchdog:${watchdogId}:${fingerprint}`,
    });
    if (wake.created) {
      await tx.watchdog.update({
        where: { id: watchdogId },
        data: { pendingReviewFingerprint: fingerprint, triggerCount: { increment: 1 }, lastTriggeredAt: new Date() },
      });
      await logStopTriggered(tx, watchdog, result, {
        mode: 'review',
        reviewIssueId: reviewIssue.id,
        wakeRequestId: wake.wake.id,
      });
    }
    return { wakeId: wake.wake.id, created: wake.created, reviewIssueId: reviewIssue.id };
  });
  if (!outcome) return { kind: 'review_running' };
  const wake = await deps.db.wakeRequest.findUniqueOrThrow({ where: { id: outcome.wakeId } });
  if (wake.status === 'queued') await dispatchWake(deps, outcome.wakeId);
  return { kind: 'triggered', woke: outcome.created, reviewIssueId: outcome.reviewIssueId };
}

/** Exactly one live review task per watched issue: reuse it, reopen it to todo when terminal. */
async function ensureReviewIssue(
  tx: Tx,
  watchdog: {
    id: string;
    companyId: string;
    issueId: string;
    agentId: string;
    issue: { title: string };
    reviewIssue: { id: string; status: string; assigneeAgentId: string | null } | null;
  },
) {
  const review = watchdog.reviewIssue;
  if (review) {
    if (review.status === 'todo' && review.assigneeAgentId === watchdog.agentId) return review;
    return tx.issue.update({ where: { id: review.id }, data: { status: 'todo', assigneeAgentId: watchdog.agentId } });
  }
  const created = await tx.issue.create({
    data: {
      companyId: watchdog.companyId,
      parentId: watchdog.issueId,
      title: `Watchdog review: ${watchdog.issue.title}`,
      status: 'todo',
      assigneeAgentId: watchdog.agentId,
      originKind: TASK_WATCHDOG_ORIGIN,
      originId: watchdog.issueId,
    },
  });
  await tx.watchdog.update({ where: { id: watchdog.id }, data: { reviewIssueId: created.id } });
  return created;
}
