/** Run lifecycle in the database: begin, enter the adapter, finish, stop. Each step is a CAS. */
import type { AcpActivity } from '../domain/acp-activity';
import type { Tx } from '../db/prisma';
import type { Run } from '../generated/prisma/client';
import type { Actor } from '../domain/actor';
import { AppError, notFound } from '../domain/errors';
import { isTerminalRunStatus, type RunStatus } from '../domain/statuses';
import { preservedCheckpoint } from '../domain/checkpoint';
import type { RunEndReason } from '../domain/postmortem';
import { logActivity, logSystemActivity } from '../db/activity-log';
import { issueInCompany, permitOnRun } from '../access/authority';
import { blockersByRun, unknownOutcomeBlocker, type PresentedBlocker } from './execution-blockers';
import type { ScopedActor } from '../domain/actor';
import type { Deps } from '../runtime/deps';
import { recordSubtreeChange } from '../changes/record';
import { stopJobsOf } from './jobs';
import { settleInterruptedRun } from '../dispatch/resume';
import { emitFinding, reconcileSupersession } from './supervision';

/**
 * Marks the point of no return: from here a stop has an unknown outcome. Refused when a stop
 * was already requested, so a run stopped during preparation never enters its adapter.
 */
export async function enterAdapter(deps: Deps, runId: string): Promise<boolean> {
  const { count } = await deps.db.run.updateMany({
    where: { id: runId, status: 'running', stopRequestedAt: null },
    data: { adapterEntered: true },
  });
  return count === 1;
}

export type RunOutcome =
  | { kind: 'exited'; exitCode: number; error?: string; outputTail?: string; endReason?: RunEndReason }
  | { kind: 'stopped' }
  | { kind: 'error'; error: string };

/** Settles a run exactly once (later calls change nothing), then runs the idempotent follow-ups it owes. */
export async function finishRun(deps: Deps, runId: string, outcome: RunOutcome): Promise<RunStatus> {
  return (await settleRun(deps, runId, outcome)).status;
}

/** {@link finishRun}, answering the run's company too (the settlement's offer of its slot: activities/index.ts). */
export async function settleRun(
  deps: Deps,
  runId: string,
  outcome: RunOutcome,
): Promise<{ status: RunStatus; companyId: string }> {
  const settled = await deps.db.$transaction(async (tx) => {
    const run = await lockRun(tx, runId);
    // what the follow-ups need, as the row ends: read under the lock, not again after it (issue 45)
    const { companyId, stopKind } = run;
    if (isTerminalRunStatus(run.status))
      return { status: run.status, issueId: run.issueId, companyId, stopKind, failure: run };
    const status: RunStatus =
      outcome.kind === 'exited'
        ? outcome.exitCode === 0
          ? 'succeeded'
          : 'failed'
        : outcome.kind === 'stopped'
          ? run.stopKind === 'max_duration'
            ? 'timed_out'
            : 'cancelled'
          : 'failed';
    const failure = await tx.run.update({
      where: { id: runId },
      select: { failureState: true, error: true },
      data: {
        status,
        finishedAt: new Date(),
        exitCode: outcome.kind === 'exited' ? outcome.exitCode : null,
        endReason: outcome.kind === 'exited' ? (outcome.endReason ?? null) : null,
        error: outcome.kind === 'stopped' ? null : outcome.kind === 'exited' ? (outcome.error ?? null) : outcome.error,
        // terminal reconciliation: an exit code and its output are an inspected result; an
        // API, provider or worker failure has an unknown outcome and stays uninspected
        ...(status === 'failed'
          ? outcome.kind === 'exited'
            ? {
                failureState: 'inspected',
                inspection: {
                  exitCode: outcome.exitCode,
                  error: outcome.error ?? null,
                  outputTail: outcome.outputTail ?? '',
                  inspectedAt: new Date(),
                },
              }
            : { failureState: 'uninspected' }
          : {}),
        stateVersion: { increment: 1 },
      },
    });
    await tx.apiToken.updateMany({ where: { runId, revokedAt: null }, data: { revokedAt: new Date() } });
    const checkpoint = preservedCheckpoint(run.stopResult);
    if (status === 'cancelled' && run.adapterEntered && run.stopKind === 'operator_hold' && !checkpoint) {
      // the adapter may have acted before the stop landed: never replay it blindly
      const blocker = await tx.executionBlocker.create({ data: unknownOutcomeBlocker(run) });
      await logSystemActivity(tx, run.companyId, {
        action: 'execution_blocker.created',
        entityType: 'run',
        entityId: runId,
        details: { blockerId: blocker.id, issueId: run.issueId, cause: blocker.cause, nextAction: blocker.nextAction },
      });
    }
    await logSystemActivity(tx, run.companyId, {
      action: `run.${status}`,
      entityType: 'run',
      entityId: runId,
      details: {
        issueId: run.issueId,
        stopKind: run.stopKind,
        adapterEntered: run.adapterEntered,
        preserved: checkpoint !== null,
      },
    });
    return { status, issueId: run.issueId, companyId, stopKind, failure };
  });
  // Follow-ups are idempotent and run on every call, so a retry after a crash between the
  // settlement and its follow-ups still stops the monitors, reconciles and resumes.
  // owner-bound work ends with its owner; a replacement run never inherits it
  await stopJobsOf(deps, runId, 'owner_terminal');
  const { failure } = settled;
  if (failure.failureState === 'uninspected')
    await emitFinding(deps, runId, 'failed-uninspected', { error: failure.error });
  if (settled.status === 'succeeded') await reconcileSupersession(deps, settled.issueId);
  if (settled.stopKind === 'operator_hold') await settleInterruptedRun(deps, runId);
  // Recorded after the follow-ups, not with the settlement: a watchdog evaluating between the two would see a
  // settled run whose owed resume is not dispatched yet as a stopped leaf. Nothing is lost in between: the run's
  // workflow settles it through the finishRun activity, retried until it returns, and every call records.
  await recordSubtreeChange(deps.db, [settled.issueId], 'run_finished');
  return { status: settled.status, companyId: settled.companyId };
}

/** `max_duration`: the run outlived TREEWARDEN_RUN_MAX_MS and settles `timed_out` */
export type StopKind = 'operator_stop' | 'operator_hold' | 'max_duration';

/**
 * Records a stop request on a live run and cancels its workflow. A queued run is settled at
 * once (it never started); a running one settles when its workflow unwinds.
 */
export async function requestStop(
  deps: Deps,
  runId: string,
  stop: { kind: StopKind; holdId?: string; actor: Actor },
): Promise<{ stopped: boolean; status: RunStatus }> {
  const result = await deps.db.$transaction(async (tx) => {
    const run = await lockRun(tx, runId);
    if (isTerminalRunStatus(run.status))
      return { stopped: false, status: run.status, queued: false, companyId: run.companyId };
    await tx.run.update({
      where: { id: runId },
      data: {
        stopKind: stop.kind,
        stoppedByHoldId: stop.holdId ?? null,
        stopRequestedAt: run.stopRequestedAt ?? new Date(),
        stopDetails: { requestedBy: stop.actor.kind } as object,
      },
    });
    await logActivity(tx, {
      companyId: run.companyId,
      actor: stop.actor,
      action: stop.kind === 'operator_hold' ? 'issue.tree_hold_run_interrupted' : 'run.stop_requested',
      entityType: 'run',
      entityId: runId,
      details: { issueId: run.issueId, holdId: stop.holdId ?? null, statusAtStop: run.status },
    });
    return { stopped: true, status: run.status, queued: run.status === 'queued', companyId: run.companyId };
  });
  if (!result.stopped) return { stopped: false, status: result.status };
  await deps.orchestrator.cancelRun(runId);
  if (result.queued) return { stopped: true, status: await finishRun(deps, runId, { kind: 'stopped' }) };
  return { stopped: true, status: result.status };
}

/** The operator stop of a run, for every route that stops one (domain/authorization.ts: 'run.stop'). */
type RunRow = Pick<
  Run,
  | 'id'
  | 'companyId'
  | 'issueId'
  | 'agentId'
  | 'status'
  | 'wakeReason'
  | 'context'
  | 'directive'
  | 'reviewWatchdogId'
  | 'startedAt'
  | 'finishedAt'
  | 'exitCode'
  | 'error'
  | 'stopKind'
  | 'stoppedByHoldId'
  | 'createdAt'
  | 'stopResult'
  | 'failureState'
  | 'silentState'
  | 'supersededByRunId'
  | 'endReason'
  | 'companyCapQueuedAt'
  | 'acpSessionId'
  | 'acpSessionOrigin'
  | 'acpActivity'
>;

/** A run as the API shows it (its owner token and supervision internals stay inside). */
export const presentRun = (r: RunRow, executionBlocker: PresentedBlocker | null = null) => ({
  id: r.id,
  companyId: r.companyId,
  issueId: r.issueId,
  agentId: r.agentId,
  status: r.status,
  wakeReason: r.wakeReason,
  context: r.context,
  directive: r.directive,
  reviewWatchdogId: r.reviewWatchdogId,
  startedAt: r.startedAt,
  finishedAt: r.finishedAt,
  exitCode: r.exitCode,
  error: r.error,
  stopKind: r.stopKind,
  stoppedByHoldId: r.stoppedByHoldId,
  createdAt: r.createdAt,
  // supervision: the verified stop (stop-partial attempts included), the failure's reconciliation, silence
  stopResult: r.stopResult,
  failureState: r.failureState,
  silentState: r.silentState,
  supersededByRunId: r.supersededByRunId,
  // continuation: `preserved` (resumes on release), `unknown_outcome` (blocked until reconciled) or `before_adapter`
  stopOutcome: (r.stopResult as { outcome?: string } | null)?.outcome ?? null,
  executionBlocker,
  // why it ended, as its agent reported (TREEWARDEN_OUTCOME_FILE): context_overflow, or null
  endReason: r.endReason,
  // queued behind its company's cap on running runs since then (TREEWARDEN_COMPANY_MAX_RUNNING_RUNS), or null
  waitingForCompanyCapSince: r.status === 'queued' ? r.companyCapQueuedAt : null,
  // an acp run's session, as its supervisor claimed it (the ledger: runs/acp-sessions.ts)
  acpSession: r.acpSessionId === null ? null : { sessionId: r.acpSessionId, origin: r.acpSessionOrigin },
  // its last tool calls, message, permission decisions and usage, as its supervisor reported them (acp/activity.ts)
  acpActivity: r.acpActivity as AcpActivity | null,
});

/** An issue's runs, oldest first, each with the blocker its stop created. */
export async function runsOfIssue(deps: Deps, actor: ScopedActor, issueId: string) {
  await issueInCompany(deps.db, actor, issueId);
  const runs = await deps.db.run.findMany({ where: { issueId }, orderBy: { createdAt: 'asc' } });
  const blockers = await blockersByRun(
    deps.db,
    runs.map((r) => r.id),
  );
  return runs.map((r) => presentRun(r, blockers.get(r.id) ?? null));
}

export async function runOfCompany(deps: Deps, actor: ScopedActor, runId: string) {
  const run = await deps.db.run.findUnique({ where: { id: runId } });
  if (!run || run.companyId !== actor.companyId) throw notFound('run');
  return presentRun(run, (await blockersByRun(deps.db, [runId])).get(runId) ?? null);
}

/** Stops a run for a person or its own token, and answers it as it is once the stop was requested. */
export async function stopRunForActor(deps: Deps, runId: string, actor: Actor) {
  const run = await deps.db.run.findUnique({ where: { id: runId } });
  if (!run || (actor.kind !== 'admin' && actor.companyId !== run.companyId))
    throw new AppError('not_found', 'run not found');
  permitOnRun(actor, 'run.stop', run);
  if (isTerminalRunStatus(run.status)) throw new AppError('conflict', `run is already ${run.status}`);
  await requestStop(deps, runId, { kind: 'operator_stop', actor });
  return presentRun(await deps.db.run.findUniqueOrThrow({ where: { id: runId } }));
}

/** Row lock first, so a concurrent begin/finish/stop sees the other's committed state. */
async function lockRun(tx: Tx, runId: string) {
  await tx.$executeRaw`SELECT 1 FROM "Run" WHERE id = ${runId}::uuid FOR UPDATE`;
  return tx.run.findUniqueOrThrow({ where: { id: runId } });
}
