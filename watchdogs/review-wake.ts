/**
 * A new stop in review mode: one review task (reused) and one wake for the fingerprint, whose server-written
 * directive tells the review run what stopped and, per blocked leaf, what its exit is.
 */
import type { Tx } from '../db/prisma';
import type { WakeRequest } from '../generated/prisma/client';
import { logSystemActivity } from '../db/activity-log';
import { AWAITING_REVIEW_END_STATE } from '../domain/change-reach';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import {
  leafDigests,
  WATCHDOG_ALLOWED_OPERATIONS,
  WATCHDOG_DEFAULT_MANDATE,
  WATCHDOG_DENIED_OPERATIONS,
  type Classification,
  type WatchdogMode,
  watchdogMayAct,
} from '../domain/watchdog';
import type { Deps } from '../runtime/deps';
import { createWake, dispatchWake } from '../dispatch/wakes';
import { blockedLeafExits } from './blocked-leaves';
import type { WatchdogSnapshot } from './subtree-snapshot';

/** The audit record (and, through it, the `watchdog_stopped` notification) of a new stop. */
export function logStopTriggered(
  tx: Tx,
  watchdog: { id: string; companyId: string; issueId: string },
  result: Classification,
  how: {
    mode: WatchdogMode;
    reviewIssueId: string | null;
    wakeRequestId?: string;
    /** self mode: one wake per stopped leaf, and the leaves nobody could be woken for */
    wakeRequestIds?: string[];
    unwokenLeaves?: { id: string; reason: string }[];
  },
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

/** The audit record of a re-check: the same stop, reviewed again (its `watchdog_stopped` was notified already). */
function logRecheck(
  tx: Tx,
  watchdog: { id: string; companyId: string; issueId: string },
  fingerprint: string,
  how: { reviewIssueId: string; wakeRequestId: string; recheck: number; repeatLimit: number },
) {
  return logSystemActivity(tx, watchdog.companyId, {
    action: 'issue.task_watchdog_rechecked',
    entityType: 'issue',
    entityId: watchdog.issueId,
    details: { watchdogId: watchdog.id, stopFingerprint: fingerprint, ...how },
  });
}

/**
 * The review that is live: a run on the review task queued, running or waiting to retry, or else its wake, still
 * queued. Seed 000: only one review is ever live, so a new stop waits for it to end.
 */
async function liveReview(tx: Tx, reviewIssueId: string | null) {
  if (!reviewIssueId) return null;
  const [runs, queuedWake] = await Promise.all([
    tx.run.count({ where: { issueId: reviewIssueId, status: { in: ['queued', 'running', 'scheduled_retry'] } } }),
    tx.wakeRequest.findFirst({ where: { issueId: reviewIssueId, status: 'queued' } }),
  ]);
  if (runs > 0) return { kind: 'run' } as const;
  return queuedWake ? ({ kind: 'wake', wake: queuedWake } as const) : null;
}

/**
 * Records, before its evaluation's summary does, that the watchdog holds a new stop back until its review run ends:
 * a review run's end reaches its watchdog only then (domain/change-reach.ts, changes/dispatcher.ts), and the summary
 * is written after this transaction commits, too late for a run that ends in between.
 */
function awaitReviewEnd(tx: Tx, watchdogId: string) {
  return tx.$executeRaw`
    UPDATE "Watchdog" SET "lastEvaluation" =
      jsonb_set(coalesce("lastEvaluation", '{}'::jsonb), '{state}', to_jsonb(${AWAITING_REVIEW_END_STATE}::text))
    WHERE id = ${watchdogId}::uuid`;
}

/** What a review's wake reads of its watchdog, its watched issue and its review task. */
type LockedWatchdog = Pick<
  WatchdogSnapshot,
  'id' | 'status' | 'companyId' | 'issueId' | 'agentId' | 'instructions' | 'reviewIssueId' | 'repeatLimit'
> & {
  issue: { title: string };
  reviewIssue: { id: string; status: string; assigneeAgentId: string | null } | null;
};

/** The watchdog's row locked and read with its watched issue's title and its review task: one statement. */
async function lockWatchdog(tx: Tx, watchdogId: string): Promise<LockedWatchdog | null> {
  const [row] = await tx.$queryRaw<
    (Omit<LockedWatchdog, 'issue' | 'reviewIssue'> & {
      title: string;
      reviewStatus: string | null;
      reviewAssigneeAgentId: string | null;
    })[]
  >`
    SELECT w.id::text, w.status::text, w."companyId"::text, w."issueId"::text, w."agentId"::text, w.instructions,
      w."reviewIssueId"::text, w."repeatLimit", i.title, r.status::text AS "reviewStatus",
      r."assigneeAgentId"::text AS "reviewAssigneeAgentId"
    FROM "Watchdog" w JOIN "Issue" i ON i.id = w."issueId" LEFT JOIN "Issue" r ON r.id = w."reviewIssueId"
    WHERE w.id = ${watchdogId}::uuid
    FOR UPDATE OF w`;
  if (!row) return null;
  const { title, reviewStatus, reviewAssigneeAgentId, ...watchdog } = row;
  const reviewIssue =
    watchdog.reviewIssueId === null || reviewStatus === null
      ? null
      : { id: watchdog.reviewIssueId, status: reviewStatus, assigneeAgentId: reviewAssigneeAgentId };
  return { ...watchdog, issue: { title }, reviewIssue };
}

type TriggerOutcome =
  | { kind: 'review_running' }
  | { kind: 'watchdog_removed' }
  | { kind: 'triggered'; woke: boolean; reviewIssueId: string };

/**
 * Wakes the watchdog agent on its review task for the stop: a new one, or (`recheck`, 1-based) the reviewed stop
 * again once its conditional acceptance ran out, under a key of its own so each re-check wakes once.
 */
export async function triggerReview(
  deps: Deps,
  watchdogId: string,
  result: Classification,
  recheck?: number,
): Promise<TriggerOutcome> {
  const fingerprint = result.fingerprint!;
  type Outcome =
    | 'watchdog_removed'
    | { stranded: WakeRequest }
    | { stranded?: undefined; wake: WakeRequest; created: boolean; reviewIssueId: string }
    | null;
  const outcome = await deps.db.$transaction(async (tx): Promise<Outcome> => {
    const watchdog = await lockWatchdog(tx, watchdogId);
    // the gate under the row's lock: a removal that committed after the evaluation read the watchdog wakes nobody
    if (!watchdogMayAct(watchdog)) return 'watchdog_removed';
    // Under the watchdog's lock, so no two evaluations can both see "no review live".
    const live = await liveReview(tx, watchdog.reviewIssueId);
    // held back for the live review: recorded under the lock, so the change dispatcher signals the end of its run
    if (live) await awaitReviewEnd(tx, watchdogId);
    if (live?.kind === 'run') return null;
    // a wake its evaluation committed but never dispatched (its worker died between the two): dispatched now, or it
    // would hold every later stop back as "review running" with no run ever coming (found by test/change-durability)
    if (live?.kind === 'wake') return { stranded: live.wake };
    // This stop was woken for already: its review task is left as it is. An evaluation that read the subtree before
    // a disposition committed would otherwise reopen the review task the disposition just closed.
    const idempotencyKey = `task_watchdog:${watchdogId}:${fingerprint}${recheck ? `:recheck:${recheck}` : ''}`;
    const woken = await tx.wakeRequest.findUnique({ where: { idempotencyKey } });
    if (woken) return { wake: woken, created: false, reviewIssueId: woken.issueId };
    const reviewIssue = await ensureReviewIssue(tx, watchdog);
    const directive = {
      taskWatchdog: {
        watchdogId,
        watchedIssueId: watchdog.issueId,
        reviewIssueId: reviewIssue.id,
        fingerprint,
        stoppedLeaves: result.stoppedLeaves,
        blockedLeaves: await blockedLeafExits(tx, result.stoppedLeaves),
        mandate: WATCHDOG_DEFAULT_MANDATE,
        instructions: watchdog.instructions,
        ...(recheck ? { recheck: { number: recheck, repeatLimit: watchdog.repeatLimit } } : {}),
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
      idempotencyKey,
    });
    const named = reviewIssue.id === watchdog.reviewIssueId ? {} : { reviewIssueId: reviewIssue.id };
    if (!wake.created && named.reviewIssueId) await tx.watchdog.update({ where: { id: watchdogId }, data: named });
    if (wake.created) {
      await tx.watchdog.update({
        where: { id: watchdogId },
        data: {
          ...named,
          pendingReviewFingerprint: fingerprint,
          pendingReviewLeafDigests: leafDigests(result.stoppedLeaves, {
            agentId: watchdog.agentId,
            instructions: watchdog.instructions,
          }),
          triggerCount: { increment: 1 },
          lastTriggeredAt: new Date(),
          // the acceptance that ran out is spent: the re-check's review decides anew
          ...(recheck ? { recheckCount: recheck, acceptedUntil: null } : {}),
        },
      });
      const how = { mode: 'review' as const, reviewIssueId: reviewIssue.id, wakeRequestId: wake.wake.id };
      if (recheck) await logRecheck(tx, watchdog, fingerprint, { ...how, recheck, repeatLimit: watchdog.repeatLimit });
      else await logStopTriggered(tx, watchdog, result, how);
    }
    return { wake: wake.wake, created: wake.created, reviewIssueId: reviewIssue.id };
  });
  if (!outcome) return { kind: 'review_running' };
  if (outcome === 'watchdog_removed') return { kind: 'watchdog_removed' };
  if (outcome.stranded) {
    await dispatchWake(deps, outcome.stranded.id, outcome.stranded.companyId);
    return { kind: 'review_running' };
  }
  // as the transaction left it: a wake another evaluation dispatched since is found claimed, under its lock
  if (outcome.wake.status === 'queued') await dispatchWake(deps, outcome.wake.id, outcome.wake.companyId);
  return { kind: 'triggered', woke: outcome.created, reviewIssueId: outcome.reviewIssueId };
}

/**
 * Exactly one live review task per watched issue: reuse it, reopen it to todo when terminal. A new one is for the
 * caller to name on the watchdog row.
 */
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
  // the watchdog row names it in the same update as the wake (triggerReview)
  return created;
}
