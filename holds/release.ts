/** Releasing tree holds: exactly once per hold, then re-dispatch exactly the interrupted work. */
import { randomUUID } from 'node:crypto';
import type { Actor, ScopedActor } from '../domain/actor';
import { AppError } from '../domain/errors';
import { emptyReport, holdNotActive, isHoldNotActive } from '../domain/hold-contract';
import type { HoldWithMembers, ReleaseArgs, ReleaseOutcome, ResumeReport } from '../domain/hold-contract';
import { ACTIONABLE_ISSUE_STATUSES, isInvokable, LIVE_RUN_STATUSES } from '../domain/statuses';
import { logActivity } from '../db/activity-log';
import type { Tx } from '../db/prisma';
import { FAN_OUT_CONCURRENCY, forEachConcurrently } from '../domain/concurrency';
import type { Deps } from '../runtime/deps';
import { recordSubtreeChange } from '../changes/record';
import { unreconciledIn } from '../runs/execution-blockers';
import { subtree } from '../tree/queries';
import { dispatchWake, wakeAndDispatch } from '../dispatch/wakes';
import { getHoldWithMembers, holdInCompany } from './read';
import { resumeEachIfOwed } from '../dispatch/resume';

/**
 * `wakeAgents` would wake members whose last run has an unknown outcome: refused while any issue
 * under the hold's root has an active blocker, so the hold stays active (composer-stop.md).
 */
export async function assertReconciled(deps: Deps, rootIssueId: string): Promise<void> {
  const unreconciled = await unreconciledIn(
    deps.db,
    (await subtree(deps.db, rootIssueId)).map((n) => n.id),
  );
  if (unreconciled.length === 0) return;
  throw new AppError(
    'reconciliation_required',
    `${unreconciled.length} task(s) under this hold were stopped mid-turn with an unknown outcome: ` +
      'resolve their execution blockers first, or release without wakeAgents',
    unreconciled,
  );
}

/**
 * Releases an active hold exactly once. The workflow's update validator is the gate; this
 * compare-and-set on the status is the database's guarantee (tagged with the release id, so a
 * retried activity of the same release carries on), and refuses with the validator's failure.
 */
export async function releaseHold(deps: Deps, holdId: string, release: ReleaseArgs): Promise<ResumeReport> {
  const { releaseId, wakeAgents, actor } = release;
  // the release and its audit entry commit together: a retry after a failure between them finds the hold released
  // by its own release id and would not log it again. The compare-and-set returns the hold: the release's one read.
  const hold = await deps.db.$transaction(async (tx) => {
    const [row] = await tx.treeHold.updateManyAndReturn({
      where: { id: holdId, status: 'active' },
      data: { status: 'released', releasedAt: new Date(), releaseResult: { releaseId, wakeAgents } },
    });
    if (!row) return releasedEarlierBy(tx, holdId, releaseId);
    await logActivity(tx, {
      companyId: row.companyId,
      actor,
      action: 'issue.tree_hold_released',
      entityType: 'issue',
      entityId: row.rootIssueId,
      details: { holdId, wakeAgents },
    });
    return row;
  });
  const { report, memberIds } = await resumeOwedWork(deps, hold);
  if (wakeAgents) await wakeOtherMembers(deps, hold.companyId, holdId, memberIds, report, actor);
  // recorded with the release's last write, after its resumes: the watchdog never sees them half dispatched
  await deps.db.$transaction(async (tx) => {
    await tx.treeHold.update({
      where: { id: holdId },
      data: { releaseResult: { releaseId, wakeAgents, ...report } as object },
    });
    await recordSubtreeChange(tx, [hold.rootIssueId], 'tree_hold_released');
  });
  return report;
}

/**
 * A hold the compare-and-set did not release: the one this same release released on an earlier attempt (a retried
 * activity carries on with it), else refused. A hold removed with its root issue is as inactive as one released
 * elsewhere: refused, not retried.
 */
async function releasedEarlierBy(tx: Tx, holdId: string, releaseId: string) {
  const row = await tx.treeHold.findUnique({ where: { id: holdId } });
  if ((row?.releaseResult as { releaseId?: string } | null)?.releaseId !== releaseId) throw holdNotActive(holdId);
  return row!;
}

/**
 * The owed resumes and deferred wakes of a released hold's subtree. Safe to repeat: the claim
 * makes each resume at most once, so a retried activity or a retry after failed wakes only
 * dispatches what is still owed. `resumed` lists every resume this hold has claimed so far.
 */
async function resumeOwedWork(deps: Deps, hold: { id: string; rootIssueId: string }) {
  const report = emptyReport();
  const memberIds = (await subtree(deps.db, hold.rootIssueId)).map((n) => n.id);
  const latestRuns = await deps.db.run.findMany({
    where: { issueId: { in: memberIds }, stopKind: 'operator_hold', resumeClaim: null },
    distinct: ['issueId'],
    orderBy: [{ issueId: 'asc' }, { createdAt: 'desc' }],
    select: { id: true },
  });
  await resumeEachIfOwed(
    deps,
    latestRuns.map((run) => run.id),
    report,
    hold.id,
  );
  // wakes deferred while the hold was active, and resume wakes a crashed attempt claimed but never dispatched
  const deferred = await deps.db.wakeRequest.findMany({
    where: { issueId: { in: memberIds }, status: 'queued' },
    select: { id: true },
  });
  await forEachConcurrently(deferred, FAN_OUT_CONCURRENCY, (wake) =>
    dispatchWake(deps, wake.id).then(
      () => undefined,
      (error: Error) => deps.log.warn({ err: error, wakeId: wake.id }, 'deferred wake dispatch failed'),
    ),
  );
  const claims = await deps.db.resumeClaim.findMany({ where: { holdId: hold.id } });
  const claimWakes = await deps.db.wakeRequest.findMany({ where: { id: { in: claims.map((c) => c.wakeRequestId) } } });
  report.resumed = claimWakes.filter((w) => w.runId).map((w) => ({ issueId: w.issueId, runId: w.runId! }));
  return { report, memberIds };
}

/** After a release whose resume wakes failed: try the still-owed resumes again. */
export async function retryOwedResumes(deps: Deps, holdId: string): Promise<ResumeReport> {
  const hold = await deps.db.treeHold.findUniqueOrThrow({ where: { id: holdId } });
  if (hold.status !== 'released') throw new Error(`tree hold ${holdId} is ${hold.status}, not released`);
  const { report } = await resumeOwedWork(deps, hold);
  if (report.wakeFailures.length === 0)
    await recordSubtreeChange(deps.db, [hold.rootIssueId], 'tree_hold_resumes_retried');
  return report;
}

/** `wakeAgents`: wake every other executable member in todo, in_progress or in_review. */
async function wakeOtherMembers(
  deps: Deps,
  companyId: string,
  holdId: string,
  memberIds: string[],
  report: ResumeReport,
  actor: Actor,
) {
  const resumedIssues = new Set(report.resumed.map((r) => r.issueId));
  const issues = await deps.db.issue.findMany({
    where: {
      id: { in: memberIds },
      companyId,
      status: { in: [...ACTIONABLE_ISSUE_STATUSES] },
      assigneeAgentId: { not: null },
    },
    include: { assignee: true, runs: { where: { status: { in: [...LIVE_RUN_STATUSES] } }, select: { id: true } } },
  });
  for (const issue of issues) {
    if (resumedIssues.has(issue.id) || issue.runs.length > 0 || !issue.assignee || !isInvokable(issue.assignee.status))
      continue;
    try {
      await wakeAndDispatch(
        deps,
        {
          companyId,
          agentId: issue.assignee.id,
          issueId: issue.id,
          reason: 'issue_tree_released',
          directive: { holdId },
          idempotencyKey: `tree_release:${holdId}:${issue.id}`,
        },
        actor,
      );
    } catch (error) {
      report.wakeFailures.push({ issueId: issue.id, message: error instanceof Error ? error.message : String(error) });
    }
  }
}

/**
 * Releases one hold through its workflow, whose update validator is the one "not active" gate (it
 * rejects with the `HoldNotActive` failure), and answers with the hold as released.
 */
export async function releaseOneHold(
  deps: Deps,
  actor: ScopedActor,
  { rootIssueId, holdId, wakeAgents }: { rootIssueId: string; holdId: string; wakeAgents: boolean },
): Promise<ReleaseOutcome> {
  const hold = await holdInCompany(deps, actor.companyId, holdId, rootIssueId);
  if (wakeAgents) await assertReconciled(deps, hold.rootIssueId);
  const report = await deps.orchestrator.releaseHold({ holdId, releaseId: randomUUID(), wakeAgents, actor });
  return { hold: await getHoldWithMembers(deps, holdId), ...report };
}

/** `mode: "resume"` on an issue: release every active hold rooted inside its subtree. */
export async function releaseHoldsInside(deps: Deps, actor: ScopedActor, issueId: string, wakeAgents: boolean) {
  const ids = (await subtree(deps.db, issueId)).map((n) => n.id);
  const holds = await deps.db.treeHold.findMany({
    where: { rootIssueId: { in: ids }, status: 'active' },
    orderBy: { createdAt: 'asc' },
  });
  if (wakeAgents) for (const hold of holds) await assertReconciled(deps, hold.rootIssueId);
  const merged: ResumeReport & { holds: HoldWithMembers[] } = { holds: [], ...emptyReport() };
  for (const hold of holds) {
    const release = { holdId: hold.id, releaseId: randomUUID(), wakeAgents, actor };
    const report = await deps.orchestrator.releaseHold(release).catch((error: unknown) => {
      if (isHoldNotActive(error)) return null; // released concurrently
      throw error;
    });
    if (!report) continue;
    merged.holds.push(await getHoldWithMembers(deps, hold.id));
    merged.resumed.push(...report.resumed);
    merged.skipped.push(...report.skipped);
    merged.wakeFailures.push(...report.wakeFailures);
  }
  return merged;
}
