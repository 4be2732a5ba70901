/** Executes a run's shell job or monitor under the same supervision as the run itself. */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { adapterSchema } from '../domain/adapter';
import { runEnvironment } from '../domain/run-env';
import type { Deps } from '../runtime/deps';
import { createWorkCgroup, removeCgroup } from '../processes/cgroups';
import { assertOwningHost } from '../processes/host-stops';
import { runFiles } from '../runs/run-files';
import { verifiedStop, type StopResult } from '../processes/process-table';
import { runSupervised, sandboxPlace, superviseAdopted } from './supervised-process';

export async function executeJob(deps: Deps, jobId: string): Promise<number> {
  const job = await deps.db.job.findUniqueOrThrow({
    where: { id: jobId },
    include: { ownerRun: { select: { id: true, workdir: true, agent: { select: { adapter: true } } } } },
  });
  const adapter = adapterSchema.safeParse(job.ownerRun.agent.adapter);
  // the job works for its owner run, with the same allow-listed environment as the run itself
  const files = runFiles(jobId, null);
  await mkdir(files.runDir, { recursive: true });
  const cgroupPath = createWorkCgroup(deps.containment, jobId);
  // refused once a stop is requested, so a stop that read no host knows nothing can spawn
  const { count } = await deps.db.job.updateMany({
    where: { id: jobId, status: 'running', stopReason: null },
    data: { host: hostname(), hostId: deps.hostId, cgroupPath },
  });
  if (count === 0) {
    removeCgroup(cgroupPath);
    throw ApplicationFailure.nonRetryable(
      `job ${jobId} was stopped before its command started`,
      'JobStoppedBeforeStart',
    );
  }
  const cwd = job.ownerRun.workdir ?? files.runDir;
  const exitCode = await runSupervised({
    command: job.command,
    args: job.args as string[],
    cwd,
    sandbox: deps.sandbox,
    place: sandboxPlace(deps.config, files, cwd),
    env: runEnvironment(
      process.env,
      deps.config.TREEWARDEN_RUN_ENV_PASSTHROUGH,
      adapter.success && adapter.data.type !== 'noop' ? adapter.data.env : {},
      {
        TREEWARDEN_JOB_ID: job.id,
        TREEWARDEN_OWNER_RUN_ID: job.ownerRunId,
      },
    ),
    ownerToken: job.ownerToken,
    cgroupPath,
    outputFile: files.output,
    // the job outlives a worker that can no longer supervise it (a deploy's drain, a crash), as its run's agent does:
    // the host's next worker adopts it (adoptJob), and its start shell records its exit status here meanwhile
    exitFile: files.exitStatus,
    stopGraceMs: deps.config.TREEWARDEN_STOP_GRACE_MS,
    onSpawn: (pgid, startTime) =>
      deps.db.job
        .update({ where: { id: jobId }, data: { processGroupId: pgid, processStartTime: startTime } })
        .then(() => undefined),
  });
  // empty unless the command left processes behind, which the orphan sweep stops (and then removes it)
  removeCgroup(cgroupPath);
  return exitCode;
}

/**
 * Adoption of a job (issue 44, item 3): on its own host, a worker takes over the supervision of a job whose worker let
 * go of it or died. Same processes, same owner token; it resolves with the exit status the job's start shell recorded.
 */
export async function adoptJob(deps: Deps, jobId: string): Promise<number> {
  const job = await deps.db.job.findUniqueOrThrow({ where: { id: jobId } });
  assertOwningHost(deps, 'job', jobId, job.hostId);
  const { processGroupId: pid, processStartTime: startTime, ownerToken, cgroupPath } = job;
  if (pid === null || startTime === null)
    throw ApplicationFailure.nonRetryable(`job ${jobId} has no command to adopt: it never started`, 'NothingToAdopt');
  await deps.db.job.update({ where: { id: jobId }, data: { adoptions: { increment: 1 } } });
  deps.log.info({ jobId, pid, hostId: deps.hostId }, 'adopting a running job whose worker let go of it');
  const exitFile = runFiles(jobId, null).exitStatus;
  const supervision = { ownerToken, cgroupPath, stopGraceMs: deps.config.TREEWARDEN_STOP_GRACE_MS, exitFile };
  const exitCode = await superviseAdopted({ pid, startTime, cgroupPath, exitFile }, supervision);
  removeCgroup(cgroupPath);
  return exitCode;
}

/** On the job's host (its host queue), like a run's verified stop. */
export async function stopJobProcesses(deps: Deps, jobId: string): Promise<StopResult> {
  const job = await deps.db.job.findUniqueOrThrow({ where: { id: jobId } });
  assertOwningHost(deps, 'job', jobId, job.hostId);
  const ctx = Context.current();
  const result = await verifiedStop(job, null, deps.config.TREEWARDEN_STOP_GRACE_MS, () => ctx.heartbeat());
  if (result.verdict === 'terminal-clean') removeCgroup(job.cgroupPath);
  await deps.db.job.update({ where: { id: jobId }, data: { stopResult: result as object } });
  return result;
}
