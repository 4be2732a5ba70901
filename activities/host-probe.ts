/**
 * Inspection's host half: what only the owning host can see of a run (its processes, the writer
 * lock's holder, the files in its workspace) and of its jobs. Runs on the host queue; read-only.
 */
import type { HostProbe, HostProbeRequest } from '../domain/host-probe';
import type { Deps } from '../runtime/deps';
import { assertOwningHost } from '../processes/host-stops';
import { ownedProcesses, writersAlive } from '../processes/process-table';
import { modifiedAt, runFiles } from '../runs/run-files';
import { readFileSync } from 'node:fs';

function tombstoneNames(file: string, id: string): boolean {
  try {
    return readFileSync(file, 'utf8').trim() === id;
  } catch {
    return false;
  }
}

export async function probeHost(deps: Deps, request: HostProbeRequest): Promise<HostProbe> {
  const [runs, jobs] = await Promise.all([
    deps.db.run.findMany({
      where: { id: { in: request.runIds } },
      select: { id: true, hostId: true, ownerToken: true, processGroupId: true, cgroupPath: true, workdir: true },
    }),
    deps.db.job.findMany({
      where: { id: { in: request.jobIds } },
      select: { id: true, hostId: true, ownerToken: true, processGroupId: true, cgroupPath: true },
    }),
  ]);
  const probe: HostProbe = { hostId: deps.hostId, runs: {}, jobs: {} };
  for (const run of runs) {
    assertOwningHost(deps, 'run', run.id, run.hostId);
    const files = runFiles(run.id, run.workdir);
    probe.runs[run.id] = {
      processes: ownedProcesses(run),
      writers: writersAlive(files.writerLock),
      tombstone: tombstoneNames(files.tombstone, run.id),
      journalPulseAt: modifiedAt(files.journal)?.toISOString() ?? null,
      outputModifiedAt: modifiedAt(files.output)?.toISOString() ?? null,
    };
  }
  for (const job of jobs) {
    assertOwningHost(deps, 'job', job.id, job.hostId);
    probe.jobs[job.id] = ownedProcesses(job);
  }
  return probe;
}
