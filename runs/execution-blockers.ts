/**
 * Execution blockers (issue 14): a run stopped mid-turn with an unknown outcome blocks automatic
 * replay of its issue until a person reconciles it. Blockers are visible wherever the run, the
 * issue or the hold is shown; resolving one honours the resume its run is still owed, through the
 * same claim table as a release.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../db/prisma';
import type { ScopedActor } from '../domain/actor';
import { AppError, notFound } from '../domain/errors';
import { emptyReport, type ResumeReport } from '../domain/hold-contract';
import { logActivity } from '../db/activity-log';
import type { Deps } from '../runtime/deps';
import { recordSubtreeChange } from '../changes/record';
import { resumeIfOwed } from '../dispatch/resume';
import { dispatchWake } from '../dispatch/wakes';

export const BLOCKER_RESOLUTIONS = ['no_external_effects', 'effects_reviewed'] as const;
export type BlockerResolution = (typeof BLOCKER_RESOLUTIONS)[number];

interface BlockerRow {
  id: string;
  runId: string | null;
  cause: string;
  nextAction: string;
  status: string;
  createdAt: Date;
  resolvedAt: Date | null;
  resolution: string | null;
  note: string | null;
}

export const presentBlocker = (b: BlockerRow) => ({
  id: b.id,
  runId: b.runId,
  cause: b.cause,
  nextAction: b.nextAction,
  status: b.status,
  createdAt: b.createdAt,
  resolvedAt: b.resolvedAt,
  resolution: b.resolution,
  note: b.note,
});

export type PresentedBlocker = ReturnType<typeof presentBlocker>;

/** The row `finishRun` writes for a hold stop of a run inside its adapter without a preserved checkpoint. */
export function unknownOutcomeBlocker(run: { id: string; companyId: string; issueId: string; stopResult: unknown }) {
  const id = randomUUID();
  const why = (run.stopResult as { outcomeReason?: string } | null)?.outcomeReason;
  return {
    id,
    companyId: run.companyId,
    issueId: run.issueId,
    runId: run.id,
    cause: 'stopped_mid_turn_unknown_outcome',
    nextAction:
      `Review what run ${run.id} did before it was stopped (no verified checkpoint${why ? `: ${why}` : ''}), ` +
      'then resolve this blocker: ' +
      `treewarden reconcile ${id} --resolution no_external_effects|effects_reviewed ` +
      `(POST /api/execution-blockers/${id}/resolve). ` +
      'The interrupted work then resumes once.',
  };
}

/** Every blocker of an issue, oldest first. */
export async function blockersOfIssue(db: Db | Tx, issueId: string): Promise<PresentedBlocker[]> {
  const rows = await db.executionBlocker.findMany({ where: { issueId }, orderBy: { createdAt: 'asc' } });
  return rows.map(presentBlocker);
}

/** The blocker each of `runIds` created, if any (one per run: it is created when the run settles). */
export async function blockersByRun(db: Db | Tx, runIds: (string | null)[]): Promise<Map<string, PresentedBlocker>> {
  const ids = runIds.filter((id): id is string => id !== null);
  if (ids.length === 0) return new Map();
  const rows = await db.executionBlocker.findMany({ where: { runId: { in: ids } }, orderBy: { createdAt: 'asc' } });
  return new Map(rows.map((b) => [b.runId!, presentBlocker(b)]));
}

/**
 * Resolves an active blocker exactly once (a second resolve is 409), then starts the workflow that
 * dispatches the resume its run is still owed. The workflow is started inside the transaction: if
 * it cannot be started nothing is resolved (the caller may retry); its activity reads the blocker
 * under a row lock, so it waits for this commit and acts only on a resolution that committed.
 */
export async function resolveBlocker(
  deps: Deps,
  blockerId: string,
  input: { resolution: BlockerResolution; note?: string },
  actor: ScopedActor,
): Promise<PresentedBlocker> {
  const existing = await deps.db.executionBlocker.findUnique({
    where: { id: blockerId },
    include: { issue: { select: { title: true } } },
  });
  if (!existing || existing.companyId !== actor.companyId) throw notFound('execution blocker');
  const resolved = await deps.db.$transaction(async (tx) => {
    const { count } = await tx.executionBlocker.updateMany({
      where: { id: blockerId, status: 'active' },
      data: {
        status: 'resolved',
        resolvedAt: new Date(),
        resolution: input.resolution,
        note: input.note ?? null,
        resolvedBy: `${actor.kind}:${actor.companyId}`,
      },
    });
    if (count === 0) throw new AppError('conflict', `execution blocker ${blockerId} is already resolved`);
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'execution_blocker.resolved',
      entityType: 'issue',
      entityId: existing.issueId,
      details: { blockerId, runId: existing.runId, resolution: input.resolution, note: input.note ?? null },
    });
    // an active blocker is a material stop fact: its resolution re-arms the watchdog above
    await recordSubtreeChange(tx, [existing.issueId], 'execution_blocker_resolved');
    await deps.orchestrator.startBlockerResolution({
      blockerId,
      companyId: actor.companyId,
      issueId: existing.issueId,
      title: existing.issue.title,
    });
    return tx.executionBlocker.findUniqueOrThrow({ where: { id: blockerId } });
  });
  return presentBlocker(resolved);
}

/** Thrown so the activity retries: a resume wake could not be dispatched (its claim was returned). */
export class ResumeDispatchFailed extends Error {
  override readonly name = 'ResumeDispatchFailed';
}

/**
 * The resume a resolved blocker's run is owed, if any (`decideResume` decides: still the latest
 * run, same assignee, agent invokable, no covering hold). At most once through the claim table, so
 * a retry after a lost worker dispatches nothing twice; a wake a lost attempt claimed but never
 * dispatched is dispatched here.
 */
export async function resumeAfterResolution(deps: Deps, blockerId: string): Promise<ResumeReport> {
  const report = emptyReport();
  const blocker = await deps.db.$transaction(async (tx) => {
    // waits for the resolving transaction to commit or roll back
    await tx.$executeRaw`SELECT 1 FROM "ExecutionBlocker" WHERE id = ${blockerId}::uuid FOR UPDATE`;
    return tx.executionBlocker.findUnique({ where: { id: blockerId } });
  });
  if (!blocker || blocker.status !== 'resolved' || !blocker.runId) return report;
  const claim = await deps.db.resumeClaim.findUnique({ where: { interruptedRunId: blocker.runId } });
  if (claim) {
    await dispatchWake(deps, claim.wakeRequestId);
    return report;
  }
  await resumeIfOwed(deps, blocker.runId, report);
  if (report.wakeFailures.length > 0)
    throw new ResumeDispatchFailed(report.wakeFailures.map((f) => f.message).join('; '));
  return report;
}

/** What stands between a hold's subtree and `wakeAgents`: every active blocker in it. */
export async function unreconciledIn(db: Db, issueIds: string[]) {
  const rows = await db.executionBlocker.findMany({
    where: { issueId: { in: issueIds }, status: 'active' },
    orderBy: { createdAt: 'asc' },
  });
  return rows.map((b) => ({ issueId: b.issueId, runId: b.runId, blockerId: b.id }));
}
