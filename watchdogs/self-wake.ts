/**
 * A new stop in self mode (issue 29, item 2; Paperclip #10399): each stopped leaf's own assignee is woken on that
 * leaf to verify its own stop, once per leaf and stop, under the review contract scoped to the leaf's subtree. There
 * is no review task and the watchdog's agent is not woken.
 */
import type { Tx } from '../db/prisma';
import type { BlockedLeafExit } from '../domain/blocked-exit';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import {
  leafDigests,
  WATCHDOG_ALLOWED_OPERATIONS,
  WATCHDOG_DENIED_OPERATIONS,
  WATCHDOG_SELF_MANDATE,
  type Classification,
  type StoppedLeaf,
  watchdogMayAct,
} from '../domain/watchdog';
import type { Deps } from '../runtime/deps';
import { createWake, dispatchWake } from '../dispatch/wakes';
import { blockedLeafExits } from './blocked-leaves';
import { logStopTriggered } from './review-wake';

/** A stopped leaf nobody can verify: its assignee is not an agent, so the stop's notification is all there is. */
interface UnwokenLeaf {
  id: string;
  reason: 'unassigned';
}

/**
 * Wakes the assignee of every stopped leaf of a new stop, keyed `task_watchdog:<id>:<fingerprint>:<leafId>`, and
 * makes the stop the reviewed one in the same transaction: what the leaves' agents decide are their own writes, and
 * a stop they leave as it was wakes nobody again. Returns whether any wake was created.
 */
export async function wakeStoppedLeaves(deps: Deps, watchdogId: string, result: Classification): Promise<boolean> {
  const fingerprint = result.fingerprint!;
  const { companyId, wakeIds } = await deps.db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT 1 FROM "Watchdog" WHERE id = ${watchdogId}::uuid FOR UPDATE`;
    const watchdog = await tx.watchdog.findUniqueOrThrow({ where: { id: watchdogId } });
    // reconfigured or removed since the evaluation read it: the change that did it evaluates again
    if (!watchdogMayAct(watchdog) || watchdog.mode !== 'self') return { companyId: watchdog.companyId, wakeIds: [] };
    const { created, unwoken } = await wakeEachLeaf(tx, watchdog, result);
    await tx.watchdog.update({
      where: { id: watchdogId },
      data: {
        lastReviewedFingerprint: fingerprint,
        reviewedLeafDigests: leafDigests(result.stoppedLeaves, watchdog),
        pendingReviewFingerprint: null,
        pendingReviewLeafDigests: [],
        acceptedUntil: null,
        recheckCount: 0,
        escalatedFingerprint: null,
        triggerCount: { increment: 1 },
        lastTriggeredAt: new Date(),
      },
    });
    await logStopTriggered(tx, watchdog, result, {
      mode: 'self',
      reviewIssueId: null,
      wakeRequestIds: created,
      unwokenLeaves: unwoken,
    });
    return { companyId: watchdog.companyId, wakeIds: created };
  });
  // each leaf's run starts on its own; a leaf under a hold keeps its wake queued until the release
  for (const wakeId of wakeIds) await dispatchWake(deps, wakeId, companyId);
  return wakeIds.length > 0;
}

async function wakeEachLeaf(
  tx: Tx,
  watchdog: { id: string; companyId: string; issueId: string; instructions: string | null },
  result: Classification,
): Promise<{ created: string[]; unwoken: UnwokenLeaf[] }> {
  const fingerprint = result.fingerprint!;
  const exits = await blockedLeafExits(tx, result.stoppedLeaves);
  const created: string[] = [];
  const unwoken: UnwokenLeaf[] = [];
  for (const leaf of result.stoppedLeaves) {
    if (!leaf.assigneeAgentId) {
      unwoken.push({ id: leaf.id, reason: 'unassigned' });
      continue;
    }
    const wake = await createWake(tx, {
      companyId: watchdog.companyId,
      agentId: leaf.assigneeAgentId,
      issueId: leaf.id,
      reason: 'task_watchdog_self_check',
      directive: selfCheckDirective(watchdog, fingerprint, leaf, exits),
      review: { watchdogId: watchdog.id, fingerprint, selfReview: true },
      idempotencyKey: `task_watchdog:${watchdog.id}:${fingerprint}:${leaf.id}`,
    });
    if (wake.created) created.push(wake.wake.id);
  }
  return { created, unwoken };
}

/** What the leaf's agent is told: its own leaf as the watchdog saw it, the mandate, and the contract it acts under. */
function selfCheckDirective(
  watchdog: { id: string; issueId: string; instructions: string | null },
  fingerprint: string,
  leaf: StoppedLeaf,
  exits: readonly BlockedLeafExit[],
) {
  return {
    taskWatchdog: {
      mode: 'self',
      watchdogId: watchdog.id,
      watchedIssueId: watchdog.issueId,
      // the leaf is its own review task: its disposition is the verdict
      reviewIssueId: leaf.id,
      fingerprint,
      stoppedLeaves: [leaf],
      blockedLeaves: exits.filter((exit) => exit.id === leaf.id),
      mandate: WATCHDOG_SELF_MANDATE,
      instructions: watchdog.instructions,
      capabilities: {
        watchedRootIssueId: leaf.id,
        reviewIssueId: leaf.id,
        excludedOriginKinds: [TASK_WATCHDOG_ORIGIN],
        allowed: WATCHDOG_ALLOWED_OPERATIONS,
        denied: WATCHDOG_DENIED_OPERATIONS,
      },
    },
  };
}
