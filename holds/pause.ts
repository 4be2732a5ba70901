/** Pausing a subtree: create the hold, then (in its workflow) snapshot the subtree and stop its live work. */
import type { ScopedActor } from '../domain/actor';
import type { HoldWithMembers } from '../domain/hold-contract';
import { LIVE_RUN_STATUSES } from '../domain/statuses';
import { logActivity } from '../db/activity-log';
import { AppError } from '../domain/errors';
import { FAN_OUT_CONCURRENCY, forEachConcurrently } from '../domain/concurrency';
import type { Deps } from '../runtime/deps';
import { recordSubtreeChange } from '../changes/record';
import { requestStop } from '../runs/runs';
import { subtree } from '../tree/queries';
import { lockCompanyScheduling } from '../dispatch/scheduling-lock';
import { getHoldWithMembers } from './read';
import { announceHoldStart } from './start-dispatcher';

/** A new hold on the subtree: returns once its workflow has applied the pause. */
export async function pauseTree(
  deps: Deps,
  actor: ScopedActor,
  root: { id: string; title: string },
  reason: string | null,
): Promise<HoldWithMembers> {
  const { companyId } = actor;
  const hold = await deps.db.$transaction(async (tx) => {
    await lockCompanyScheduling(tx, companyId, 'hold');
    const created = await tx.treeHold.create({ data: { companyId, rootIssueId: root.id, reason } });
    await announceHoldStart(tx);
    await logActivity(tx, {
      companyId,
      actor,
      action: 'issue.tree_hold_created',
      entityType: 'issue',
      entityId: root.id,
      details: { holdId: created.id, reason },
    });
    return created;
  });
  // the quick path; a worker's dispatcher starts it too when this process loses Temporal or dies here
  await deps.orchestrator
    .startHold({ holdId: hold.id, companyId, rootIssueId: root.id, title: root.title })
    .catch((error: unknown) => {
      if (error instanceof AppError) throw error;
      deps.log.warn({ err: error, holdId: hold.id }, "could not start a pause's hold workflow; a worker will");
      throw new AppError(
        'unavailable',
        `hold ${hold.id} is recorded, but its workflow could not be started from here ` +
          `(${error instanceof Error ? error.message : String(error)}); a worker starts it and applies the pause: ` +
          `read it back with GET /api/tree-holds/${hold.id}`,
        { holdId: hold.id },
      );
    });
  return getHoldWithMembers(deps, hold.id);
}

/**
 * Applies a pause: snapshot the subtree, cancel its unclaimed wakes, and stop its live runs as
 * operator stops by this hold. Idempotent: a retry after a crash re-stops any run still live.
 */
export async function applyPause(deps: Deps, holdId: string) {
  const hold = await deps.db.treeHold.findUniqueOrThrow({ where: { id: holdId } });
  if (!hold.appliedAt && hold.status === 'active') {
    await deps.db.$transaction(
      async (tx) => {
        await lockCompanyScheduling(tx, hold.companyId, 'hold');
        const nodes = await subtree(tx, hold.rootIssueId);
        const ids = nodes.map((n) => n.id);
        const [issues, liveRuns] = await Promise.all([
          tx.issue.findMany({ where: { id: { in: ids } }, select: { id: true, status: true, assigneeAgentId: true } }),
          tx.run.findMany({
            where: { issueId: { in: ids }, status: { in: [...LIVE_RUN_STATUSES] } },
            orderBy: { createdAt: 'desc' },
          }),
        ]);
        const issueById = new Map(issues.map((i) => [i.id, i]));
        const runByIssue = new Map<string, (typeof liveRuns)[number]>();
        for (const run of liveRuns) if (!runByIssue.has(run.issueId)) runByIssue.set(run.issueId, run);
        await tx.treeHoldMember.createMany({
          skipDuplicates: true,
          data: nodes.map((n) => {
            const issue = issueById.get(n.id)!;
            const run = runByIssue.get(n.id);
            return {
              holdId,
              issueId: n.id,
              depth: n.depth,
              issueStatus: issue.status,
              assigneeAgentId: issue.assigneeAgentId,
              activeRunId: run?.id ?? null,
              activeRunStatus: run?.status ?? null,
              interruptedRunId: run?.id ?? null,
            };
          }),
        });
        await tx.wakeRequest.updateMany({
          where: { issueId: { in: ids }, status: 'queued' },
          data: { status: 'cancelled', skipReason: `cancelled by tree hold ${holdId}` },
        });
        await tx.treeHold.update({ where: { id: holdId }, data: { appliedAt: new Date() } });
      },
      { timeout: 60_000 },
    );
  }
  const interrupted = await deps.db.treeHoldMember.findMany({
    where: { holdId, interruptedRunId: { not: null } },
    select: { interruptedRunId: true },
  });
  await forEachConcurrently(interrupted, FAN_OUT_CONCURRENCY, async ({ interruptedRunId }) => {
    await requestStop(deps, interruptedRunId!, {
      kind: 'operator_hold',
      holdId,
      actor: { kind: 'system', companyId: hold.companyId },
    });
  });
  // once the stops are requested; the activity is retried until it returns, so a crash before this re-runs it
  await recordSubtreeChange(deps.db, [hold.rootIssueId], 'tree_hold_applied');
  return getHoldWithMembers(deps, holdId);
}
