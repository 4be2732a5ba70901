/** Wake requests: the one door through which work starts. A queued wake becomes a run. */
import type { Tx } from '../db/prisma';
import { isInvokable } from '../domain/statuses';
import type { Deps } from './deps';
import { activeHoldsCovering, lockCompanyScheduling } from './tree';
import { logActivity } from './activity-log';
import type { Actor } from '../domain/actor';

export interface WakeInput {
  companyId: string;
  agentId: string;
  issueId: string;
  reason: string;
  context?: Record<string, unknown>;
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
    idempotencyKey: input.idempotencyKey ?? null,
  };
  if (!input.idempotencyKey) return { wake: await tx.wakeRequest.create({ data }), created: true };
  // ON CONFLICT DO NOTHING: a unique violation inside a transaction would abort it
  const { count } = await tx.wakeRequest.createMany({ data: [data], skipDuplicates: true });
  const wake = await tx.wakeRequest.findUniqueOrThrow({ where: { idempotencyKey: input.idempotencyKey } });
  return { wake, created: count === 1 };
}

export type DispatchOutcome =
  | { kind: 'dispatched'; runId: string }
  | { kind: 'deferred'; holdIds: string[] }
  | { kind: 'skipped'; reason: string }
  | { kind: 'not_queued' };

/**
 * Turns a queued wake into a queued run (in one transaction, under the company scheduling
 * lock so a pause cannot miss it) and starts its workflow. A wake under an active hold stays
 * queued: deferred, not lost; the release dispatches it.
 */
export async function dispatchWake(deps: Deps, wakeId: string): Promise<DispatchOutcome> {
  const outcome = await deps.db.$transaction(async (tx) => {
    const wake = await tx.wakeRequest.findUniqueOrThrow({ where: { id: wakeId } });
    await lockCompanyScheduling(tx, wake.companyId);
    const current = await tx.wakeRequest.findUniqueOrThrow({ where: { id: wakeId }, include: { agent: true, issue: true } });
    if (current.status !== 'queued') return { kind: 'not_queued' as const };
    if (!isInvokable(current.agent.status)) {
      await tx.wakeRequest.update({ where: { id: wakeId }, data: { status: 'skipped', skipReason: `agent ${current.agent.status}` } });
      return { kind: 'skipped' as const, reason: `agent is ${current.agent.status}` };
    }
    const holds = await activeHoldsCovering(tx, current.issueId);
    if (holds.length > 0) return { kind: 'deferred' as const, holdIds: holds.map((h) => h.id) };
    const run = await tx.run.create({
      data: {
        companyId: current.companyId,
        issueId: current.issueId,
        agentId: current.agentId,
        wakeRequestId: current.id,
        wakeReason: current.reason,
        context: current.context as object,
      },
    });
    await tx.wakeRequest.update({ where: { id: wakeId }, data: { status: 'claimed', runId: run.id, claimedAt: new Date() } });
    return { kind: 'dispatched' as const, runId: run.id, title: current.issue.title, companyId: current.companyId, issueId: current.issueId };
  });
  if (outcome.kind !== 'dispatched') return outcome;
  try {
    await deps.orchestrator.startRun({ runId: outcome.runId, companyId: outcome.companyId, issueId: outcome.issueId, title: outcome.title });
  } catch (error) {
    // Compensate so nothing is half-done: the run never existed for Temporal, so its row goes
    // (one interrupted task never shows two resumed runs), and the wake is queued again.
    const message = error instanceof Error ? error.message : String(error);
    deps.log.warn({ wakeId, runId: outcome.runId, err: error }, 'run workflow could not be started; the wake is queued again');
    await deps.db.$transaction([
      deps.db.wakeRequest.update({ where: { id: wakeId }, data: { status: 'queued', runId: null, claimedAt: null } }),
      deps.db.run.delete({ where: { id: outcome.runId } }),
    ]);
    throw new WakeDispatchError(wakeId, message);
  }
  return { kind: 'dispatched', runId: outcome.runId };
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
  const outcome = wake.status === 'queued' ? await dispatchWake(deps, wake.id) : ({ kind: 'not_queued' } as const);
  return { wake: await deps.db.wakeRequest.findUniqueOrThrow({ where: { id: wake.id } }), created, outcome };
}
