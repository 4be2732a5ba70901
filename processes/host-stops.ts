/**
 * Stops that only one host can verify. A run's processes live in its host's `/proc`, so its
 * verified stop runs there; while that host has no live worker the stop is `stop-pending` (naming
 * the host), and it becomes `terminal-clean` or `stop-partial` only when a worker of that host has
 * looked, or `host-lost` once an operator declares the host gone for good.
 */
import type { Actor } from '../domain/actor';
import { AppError } from '../domain/errors';
import { LIVE_RUN_STATUSES } from '../domain/statuses';
import type { UnverifiedStop } from '../domain/supervision';
import { logActivity } from '../db/activity-log';
import { permit } from '../access/authority';
import type { Deps } from '../runtime/deps';
import { emitFinding } from '../runs/supervision';

export type StopTarget = 'run' | 'job';

/** An activity for one host's processes reached a worker of another host: it must read nothing. */
export class WrongHostError extends Error {
  override readonly name = 'WrongHostError';
  constructor(
    readonly target: StopTarget,
    readonly id: string,
    readonly owningHost: string,
    readonly thisHost: string,
  ) {
    super(
      `${target} ${id} runs on host ${owningHost}; this worker is on host ${thisHost} and cannot see its processes`,
    );
  }
}

export function assertOwningHost(deps: Deps, target: StopTarget, id: string, owningHost: string | null): void {
  if (owningHost !== null && owningHost !== deps.hostId) throw new WrongHostError(target, id, owningHost, deps.hostId);
}

/** The host whose /proc holds the work's processes; null when no process was ever started. */
export async function hostOf(deps: Deps, target: StopTarget, id: string): Promise<string | null> {
  const row =
    target === 'run'
      ? await deps.db.run.findUniqueOrThrow({ where: { id }, select: { hostId: true } })
      : await deps.db.job.findUniqueOrThrow({ where: { id }, select: { hostId: true } });
  return row.hostId;
}

async function writeStopResult(deps: Deps, target: StopTarget, id: string, stopResult: object): Promise<void> {
  if (target === 'run')
    await deps.db.run.update({ where: { id }, data: { stopResult, stateVersion: { increment: 1 } } });
  else await deps.db.job.update({ where: { id }, data: { stopResult } });
}

/** No host ever started a process for this work (it was stopped before it spawned): nothing can survive. */
export async function recordNothingStarted(deps: Deps, target: StopTarget, id: string): Promise<void> {
  await writeStopResult(deps, target, id, {
    verdict: 'terminal-clean',
    attempts: [],
    verifiedAt: new Date().toISOString(),
    detail: 'no process was started on any host',
  });
}

/**
 * The owning host did not verify the stop (no live worker there, or it failed trying): pending,
 * or host-lost at once when the host was already declared lost. A worker that starts on the host
 * completes it (processes/orphans.ts).
 */
export async function recordStopPending(
  deps: Deps,
  target: StopTarget,
  id: string,
  host: string,
  reason: string,
): Promise<UnverifiedStop> {
  const lost = await deps.db.lostHost.findUnique({ where: { hostId: host } });
  const result: UnverifiedStop = lost
    ? { verdict: 'host-lost', host, declaredAt: lost.declaredAt.toISOString() }
    : { verdict: 'stop-pending', host, since: new Date().toISOString() };
  await writeStopResult(deps, target, id, { ...result, reason });
  const runId =
    target === 'run'
      ? id
      : (await deps.db.job.findUniqueOrThrow({ where: { id }, select: { ownerRunId: true } })).ownerRunId;
  await emitFinding(deps, runId, result.verdict, { host, ...(target === 'job' ? { jobId: id } : {}) });
  return result;
}

const pendingOn = (hostId: string) => ({ hostId, stopResult: { path: ['verdict'], equals: 'stop-pending' } });

/** Runs and jobs whose stop waits for this host. */
export async function pendingStopsOn(deps: Deps, hostId: string) {
  const [runs, jobs] = await Promise.all([
    deps.db.run.findMany({ where: pendingOn(hostId) }),
    deps.db.job.findMany({ where: pendingOn(hostId) }),
  ]);
  return { runs, jobs };
}

/** Settled runs of this host whose last verified stop left survivors (`stop-partial`): verified again. */
export function partialStopsOn(deps: Deps, hostId: string) {
  return deps.db.run.findMany({
    where: {
      hostId,
      status: { notIn: [...LIVE_RUN_STATUSES] },
      stopResult: { path: ['verdict'], equals: 'stop-partial' },
    },
  });
}

/**
 * `POST /api/hosts/:hostId/lost`: the host and every process on it are gone for good. Its pending
 * stops settle as `host-lost` (never clean); stops recorded later for it settle so at once.
 */
export async function declareHostLost(deps: Deps, hostId: string, actor: Actor) {
  permit(actor, 'host.declare_lost', { companyId: null });
  if (hostId === deps.hostId)
    throw new AppError('conflict', `host ${hostId} is the host this API runs on: it is not lost`);
  const declared = await deps.db.lostHost.upsert({
    where: { hostId },
    create: { hostId, declaredBy: actor.kind },
    update: {},
  });
  const settled: UnverifiedStop = { verdict: 'host-lost', host: hostId, declaredAt: declared.declaredAt.toISOString() };
  const { runs, jobs } = await pendingStopsOn(deps, hostId);
  for (const run of runs) {
    await deps.db.run.update({
      where: { id: run.id },
      data: { stopResult: { ...settled, previous: run.stopResult } as object, stateVersion: { increment: 1 } },
    });
    await emitFinding(deps, run.id, 'host-lost', { host: hostId });
    await deps.db.$transaction((tx) =>
      logActivity(tx, {
        companyId: run.companyId,
        actor,
        action: 'run.host_lost',
        entityType: 'run',
        entityId: run.id,
        details: { hostId },
      }),
    );
  }
  for (const job of jobs)
    await deps.db.job.update({
      where: { id: job.id },
      data: { stopResult: { ...settled, previous: job.stopResult } as object },
    });
  return deps.db.lostHost.update({
    where: { hostId },
    data: { settledRuns: { increment: runs.length }, settledJobs: { increment: jobs.length } },
  });
}
