/** Where a run's files live: the supervisor's own folder, and the conventions inside its workspace. */
import { readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunFiles {
  /** the supervisor's folder: output, journal, context */
  runDir: string;
  output: string;
  /** the run appends to it to say it is making progress */
  journal: string;
  context: string;
  /** `TREEWARDEN_CAPSULE_FILE`: what the work this run continues or replaces did (domain/capsule.ts) */
  capsule: string;
  /** `TREEWARDEN_OUTCOME_FILE`: an agent may say why it ended, `{"reason": "context_overflow"}` */
  outcome: string;
  /** `TREEWARDEN_CHECKPOINT_FILE`: a resumable agent writes `{"resumable": true, ...}` here on SIGTERM */
  checkpoint: string;
  /** touched when the supervisor sees the stop, before it signals: a checkpoint must be newer */
  stopObserved: string;
  /** in the run folder, what only the supervisor writes: covered by an empty read-only mount in the sandbox */
  records: string;
  /** the agent's exit status, written by its start shell (processes/cgroups.ts); an adopting worker reads it */
  exitStatus: string;
  /** in the workspace: holds the pid of the process writing to it */
  writerLock: string;
  /** in the workspace: names the run that finished its work there */
  tombstone: string;
}

/** every run's folder is a directory here named by its run id; retention (retention/) removes finished ones */
export const runFilesRoot = (): string => join(tmpdir(), 'treewarden-runs');

/**
 * The gate sockets (processes/sandbox-gate.ts) of the workers of one task queue on this host: a sandbox reaches its own
 * service's API through them, never another stack's that shares the host
 */
export const sandboxGateDir = (taskQueue: string): string =>
  join(runFilesRoot(), '.gate', encodeURIComponent(taskQueue));

export function runFiles(runId: string, workdir: string | null): RunFiles {
  const runDir = join(runFilesRoot(), runId);
  const workspace = workdir ?? runDir;
  return {
    runDir,
    output: join(runDir, 'output.log'),
    journal: join(runDir, 'journal.log'),
    context: join(runDir, 'context.json'),
    capsule: join(runDir, 'capsule.json'),
    outcome: join(runDir, 'outcome.json'),
    checkpoint: join(runDir, 'checkpoint.json'),
    stopObserved: join(runDir, 'stop-observed'),
    records: join(runDir, '.supervisor'),
    exitStatus: join(runDir, '.supervisor', 'exit-status'),
    writerLock: join(workspace, '.treewarden-writer.lock'),
    tombstone: join(workspace, '.treewarden-tombstone'),
  };
}

/** Modification time of a file, or null when it does not exist. */
export function modifiedAt(file: string): Date | null {
  try {
    return statSync(file).mtime;
  } catch {
    return null;
  }
}

/**
 * A file in the run folder, read only when it is at most `maxBytes` (null when larger or absent): the agent can write
 * there, so it is untrusted and may be anything, of any size.
 */
export function readSmallRunFile(file: string, maxBytes: number): string | null {
  try {
    return statSync(file).size <= maxBytes ? readFileSync(file, 'utf8') : null;
  } catch {
    return null;
  }
}
