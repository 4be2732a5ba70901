/**
 * Adoption (issue 25): on the run's own host, a worker takes over the supervision of an agent whose worker let go of
 * it (a deploy's drain, a crash, a heartbeat that arrived late). Nothing restarts: same process, same token, same
 * output file; the lease, silence grading, output cap and verified stop go on, and the run settles with the exit
 * status the agent's start shell recorded.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Deps } from '../runtime/deps';
import { firstLayerOf } from '../domain/acp-stop';
import { adapterOf } from '../domain/adapter';
import { assertOwningHost } from '../processes/host-stops';
import { runFiles } from '../runs/run-files';
import type { RunOutcome } from '../runs/runs';
import { exitedOutcome, markStopsObserved, supervisorTick } from './run-adapter';
import { superviseAdopted } from './supervised-process';

export async function adoptRun(deps: Deps, runId: string): Promise<RunOutcome> {
  const run = await deps.db.run.findUniqueOrThrow({ where: { id: runId }, include: { agent: true } });
  assertOwningHost(deps, 'run', runId, run.hostId);
  const { processGroupId: pid, processStartTime: startTime, ownerToken } = run;
  if (!run.adapterEntered || pid === null || startTime === null || ownerToken === null)
    throw ApplicationFailure.nonRetryable(
      `run ${runId} has no agent to adopt: its worker let go of it before the agent started`,
      'NothingToAdopt',
    );
  const files = runFiles(runId, run.workdir);
  markStopsObserved(files);
  deps.log.info({ runId, pid, hostId: deps.hostId }, 'adopting a running agent whose worker let go of it');
  // its cgroup first, where it has one; else its start shell's pid and start time (processes/adopted-agent.ts)
  const agent = { pid, startTime, cgroupPath: run.cgroupPath, exitFile: files.exitStatus };
  const exitCode = await superviseAdopted(agent, {
    ownerToken,
    cgroupPath: run.cgroupPath,
    stopGraceMs: deps.config.TREEWARDEN_STOP_GRACE_MS,
    tick: supervisorTick(deps, run, files),
    exitFile: files.exitStatus,
    firstLayer: firstLayerOf(adapterOf(run.agent.adapter)),
  });
  deps.log.info({ runId, exitCode }, 'the adopted agent exited');
  return exitedOutcome(files, run.cgroupPath, exitCode);
}
