/** Wake requests: the one door through which work starts. A queued wake becomes a run. */
import { Prisma, type Tx } from '../db/prisma';
import type { RunDirective } from '../domain/run-directive';
import { notFound } from '../domain/errors';
import { isInvokable, type AgentStatus } from '../domain/statuses';
import type { Deps } from '../runtime/deps';
import { activeHoldsCovering } from '../tree/queries';
import { lockCompanyScheduling } from './scheduling-lock';
import { logActivity } from '../db/activity-log';
import { deferredAtCompanyCap } from './company-cap';
import type { Actor } from '../domain/actor';

export interface WakeInput {
  companyId: string;
  agentId: string;
  issueId: string;
  reason: string;
  /** the waker's data for the agent; the server never reads it back */
  context?: Record<string, unknown>;
  /** what treewarden tells the run (domain/run-directive.ts); only server code passes it */
  directive?: RunDirective;
  /**
   * a watchdog review: the watchdog and stop fingerprint whose authority the run gets; `selfReview`, a self-mode
   * verification, whose scope is the wake's own issue (domain/review-authority.ts)
   */
  review?: { watchdogId: string; fingerprint: string; selfReview?: boolean };
  idempotencyKey?: string | null;
}

/** Insert a queued wake; with an idempotency key a repeat returns the first wake (created=false). */
export async function createWake(tx: Tx, input: WakeInput) {
  const data = {
    companyId: input.companyId,
    agentId: input.agentId,
    issueId: input.issueId,
    reason: input.reason,
    context: (input.context ?? {}) as object,
    directive: (input.directive as object | undefined) ?? Prisma.DbNull,
    reviewWatchdogId: input.review?.watchdogId ?? null,
    reviewFingerprint: input.review?.fingerprint ?? null,
    selfReview: input.review?.selfReview ?? false,
    idempotencyKey: input.idempotencyKey ?? null,
  };
  if (!input.idempotencyKey) return { wake: await tx.wakeRequest.create({ data }), created: true };
  // ON CONFLICT DO NOTHING: a unique violation inside a transaction would abort it; the inserted row comes back
  // with the insert, so only a repeat reads the first wake
  const [inserted] = await tx.wakeRequest.createManyAndReturn({ data: [data], skipDuplicates: true });
  if (inserted) return { wake: inserted, created: true };
  return {
    wake: await tx.wakeRequest.findUniqueOrThrow({ where: { idempotencyKey: input.idempotencyKey } }),
    created: false,
  };
}

export type DispatchOutcome =
  | { kind: 'dispatched'; runId: string }
  | { kind: 'deferred'; holdIds: string[] }
  | { kind: 'skipped'; reason: string }
  | { kind: 'not_queued' };

/** A queued wake turned into a queued run inside a transaction; its workflow is not started yet. */
export type WakeClaim =
  | { kind: 'dispatched'; runId: string; title: string; companyId: string; issueId: string }
  | Exclude<DispatchOutcome, { kind: 'dispatched' }>;

/**
 * Inside the caller's transaction, turns a queued wake into a queued run under the company scheduling lock, so a
 * pause cannot miss it. A wake under an active hold stays queued: deferred, not lost; the release dispatches it.
 */
export async function claimWakeForRun(tx: Tx, wakeId: string, companyId: string): Promise<WakeClaim> {
  await lockCompanyScheduling(tx, companyId, 'dispatch');
  // after the company lock, never before it: a pause holding that lock updates wake rows
  const current = await lockWake(tx, wakeId);
  if (current.status !== 'queued') return { kind: 'not_queued' };
  if (!isInvokable(current.agentStatus)) {
    await tx.wakeRequest.update({
      where: { id: wakeId },
      data: { status: 'skipped', skipReason: `agent ${current.agentStatus}` },
    });
    return { kind: 'skipped', reason: `agent is ${current.agentStatus}` };
  }
  const holds = await activeHoldsCovering(tx, current.issueId);
  if (holds.length > 0) return { kind: 'deferred', holdIds: holds.map((h) => h.id) };
  const run = await tx.run.create({
    data: {
      companyId: current.companyId,
      issueId: current.issueId,
      agentId: current.agentId,
      wakeRequestId: current.id,
      wakeReason: current.reason,
      context: current.context as object,
      directive: (current.directive as object | null) ?? Prisma.DbNull,
      reviewWatchdogId: current.reviewWatchdogId,
      reviewFingerprint: current.reviewFingerprint,
      selfReview: current.selfReview,
    },
  });
  await tx.wakeRequest.update({
    where: { id: wakeId },
    data: { status: 'claimed', runId: run.id, claimedAt: new Date() },
  });
  return {
    kind: 'dispatched',
    runId: run.id,
    title: current.title,
    companyId: current.companyId,
    issueId: current.issueId,
  };
}

/** What a claim reads of its wake: the row locked, with its agent's status and its issue's title, one statement. */
async function lockWake(tx: Tx, wakeId: string) {
  const [wake] = await tx.$queryRaw<
    {
      id: string;
      companyId: string;
      agentId: string;
      issueId: string;
      reason: string;
      context: unknown;
      directive: unknown;
      reviewWatchdogId: string | null;
      reviewFingerprint: string | null;
      selfReview: boolean;
      status: string;
      agentStatus: AgentStatus;
      title: string;
    }[]
  >`
    SELECT w.id::text, w."companyId"::text, w."agentId"::text, w."issueId"::text, w.reason, w.context, w.directive,
      w."reviewWatchdogId"::text, w."reviewFingerprint", w."selfReview", w.status::text,
      a.status::text AS "agentStatus", i.title
    FROM "WakeRequest" w JOIN "Agent" a ON a.id = w."agentId" JOIN "Issue" i ON i.id = w."issueId"
    WHERE w.id = ${wakeId}::uuid
    FOR UPDATE OF w`;
  if (!wake) throw notFound('wake');
  return wake;
}

/**
 * Starts the workflow of a run claimed by {@link claimWakeForRun}, after its transaction committed, unless the run
 * waits for its company's cap as a row (company-cap.ts: a settlement's offer starts it). When Temporal
 * refuses, nothing stays half-done: the run never existed for Temporal, so its row goes (one interrupted task never
 * shows two resumed runs), and the wake is queued again.
 */
export async function startClaimedRun(deps: Deps, wakeId: string, claim: WakeClaim): Promise<DispatchOutcome> {
  if (claim.kind !== 'dispatched') return claim;
  if (await deferredAtCompanyCap(deps, claim.companyId, claim.runId)) return { kind: 'dispatched', runId: claim.runId };
  try {
    await deps.orchestrator.startRun({
      runId: claim.runId,
      companyId: claim.companyId,
      issueId: claim.issueId,
      title: claim.title,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    deps.log.warn(
      { wakeId, runId: claim.runId, err: error },
      'run workflow could not be started; the wake is queued again',
    );
    await deps.db.$transaction([
      deps.db.wakeRequest.update({ where: { id: wakeId }, data: { status: 'queued', runId: null, claimedAt: null } }),
      deps.db.run.delete({ where: { id: claim.runId } }),
    ]);
    throw new WakeDispatchError(wakeId, message);
  }
  return { kind: 'dispatched', runId: claim.runId };
}

/** Turns a queued wake into a queued run and starts its workflow. */
export async function dispatchWake(deps: Deps, wakeId: string, knownCompanyId?: string): Promise<DispatchOutcome> {
  const claim = await deps.db.$transaction(async (tx) => {
    // the company's scheduling lock comes before the wake's row lock, so a caller that just wrote the wake says whose
    const companyId =
      knownCompanyId ??
      (await tx.wakeRequest.findUniqueOrThrow({ where: { id: wakeId }, select: { companyId: true } })).companyId;
    return claimWakeForRun(tx, wakeId, companyId);
  });
  return startClaimedRun(deps, wakeId, claim);
}

/** The run workflow could not be started; the wake is queued again and can be retried. */
export class WakeDispatchError extends Error {
  override readonly name = 'WakeDispatchError';
  constructor(
    readonly wakeId: string,
    reason: string,
  ) {
    super(`wake ${wakeId} could not be dispatched: ${reason}`);
  }
}

/** Create (or find, by key) a wake and dispatch it; the usual path for the API and activities. */
export async function wakeAndDispatch(deps: Deps, input: WakeInput, actor: Actor) {
  const { wake, created } = await deps.db.$transaction(async (tx) => {
    const result = await createWake(tx, input);
    if (result.created) {
      await logActivity(tx, {
        companyId: input.companyId,
        actor,
        action: 'issue.wake_requested',
        entityType: 'issue',
        entityId: input.issueId,
        details: { wakeRequestId: result.wake.id, reason: input.reason },
      });
    }
    return result;
  });
  const outcome =
    wake.status === 'queued' ? await dispatchWake(deps, wake.id, wake.companyId) : ({ kind: 'not_queued' } as const);
  return { wake: await deps.db.wakeRequest.findUniqueOrThrow({ where: { id: wake.id } }), created, outcome };
}
