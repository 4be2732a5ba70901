/**
 * The typed registry of background work: agent runs (the Run table), and the shell jobs and
 * monitors a run starts (the Job table, each bound to its owner run). One id resolves to one
 * kind, and one stop operation accepts any of them.
 */
import type { Actor } from '../domain/actor';
import type { Job } from '../generated/prisma/client';
import type { OnCreated } from '../db/prisma';
import { AppError } from '../domain/errors';
import { isTerminalRunStatus } from '../domain/statuses';
import { newTokenSecret } from '../domain/tokens';
import { logActivity } from '../db/activity-log';
import { permitOnRun } from '../access/authority';
import type { Deps } from '../runtime/deps';

export type WorkKind = 'agent_run' | 'shell_job' | 'monitor';

export interface JobRequest {
  kind: 'shell_job' | 'monitor';
  command: string;
  args: string[];
}

/** A running run starts owner-bound work; a terminal run cannot (nothing would stop it). */
export async function createJob(
  deps: Deps,
  ownerRunId: string,
  request: JobRequest,
  actor: Actor,
  onCreated?: OnCreated<Job>,
) {
  const run = await deps.db.run.findUniqueOrThrow({
    where: { id: ownerRunId },
    include: { issue: { select: { title: true } } },
  });
  if (isTerminalRunStatus(run.status))
    throw new AppError(
      'conflict',
      `run ${ownerRunId} is ${run.status}: a terminal run cannot start ${request.kind.replace('_', ' ')}s`,
    );
  const job = await deps.db.$transaction(async (tx) => {
    const created = await tx.job.create({
      data: {
        companyId: run.companyId,
        ownerRunId,
        kind: request.kind,
        command: request.command,
        args: request.args,
        ownerToken: newTokenSecret('two'),
      },
    });
    await logActivity(tx, {
      companyId: run.companyId,
      actor,
      action: 'run.job_started',
      entityType: 'run',
      entityId: ownerRunId,
      details: { jobId: created.id, kind: request.kind },
    });
    await onCreated?.(tx, created);
    return created;
  });
  await deps.orchestrator.startJob({
    jobId: job.id,
    hostId: run.hostId,
    companyId: run.companyId,
    issueId: run.issueId,
    title: `${request.kind} of a run on "${run.issue.title}"`,
  });
  return job;
}

/** Asks a running job to stop; its workflow verifies the stop and settles it. */
export async function requestJobStop(
  deps: Deps,
  jobId: string,
  reason: 'operator' | 'owner_terminal',
): Promise<boolean> {
  const { count } = await deps.db.job.updateMany({
    where: { id: jobId, status: 'running', stopReason: null },
    data: { stopReason: reason },
  });
  const job = await deps.db.job.findUniqueOrThrow({ where: { id: jobId } });
  if (job.status !== 'running') return false;
  await deps.orchestrator.cancelJob(jobId);
  return count === 1;
}

export async function stopJobsOf(deps: Deps, ownerRunId: string, reason: 'owner_terminal') {
  const running = await deps.db.job.findMany({ where: { ownerRunId, status: 'running' }, select: { id: true } });
  for (const job of running) await requestJobStop(deps, job.id, reason);
  return running.length;
}

/** running → exited | stopped, once. */
export async function finishJob(
  deps: Deps,
  jobId: string,
  outcome: { kind: 'exited'; exitCode: number } | { kind: 'stopped' } | { kind: 'error'; error: string },
) {
  await deps.db.job.updateMany({
    where: { id: jobId, status: 'running' },
    data: {
      status: outcome.kind === 'exited' ? 'exited' : 'stopped',
      exitCode: outcome.kind === 'exited' ? outcome.exitCode : null,
      finishedAt: new Date(),
      ...(outcome.kind === 'error' ? { stopReason: `error: ${outcome.error}` } : {}),
    },
  });
  return deps.db.job.findUniqueOrThrow({ where: { id: jobId } });
}
