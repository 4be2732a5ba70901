/**
 * One supervised command: its own process group, the owner token in its environment, output to
 * a file, a heartbeat while it lives, and a verified stop (seed 003, fixes 1 and 10).
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import { spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { inCgroup } from '../runs/cgroups';
import { readFileTail } from '../runs/output-file';
import { OWNER_TOKEN_ENV, ownedProcesses, signalAll } from '../runs/process-table';

const HEARTBEAT_EVERY_MS = 1_000;
export interface SupervisedCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  ownerToken: string;
  /** the run's or job's cgroup (runs/cgroups.ts): the command starts inside it; null where there are none */
  cgroupPath: string | null;
  outputFile: string;
  /** records the group before the wait, so a stop can always find it */
  onSpawn(pgid: number): Promise<void>;
  /** SIGTERM → SIGKILL escalation when the worker's shutdown grace period ends before the command */
  stopGraceMs: number;
  /** called about every `everyMs` while the command runs (lease renewal, silence checks) */
  tick?: { everyMs: number; run(): Promise<void> };
}

/**
 * Runs the command and resolves with its exit code. On cancellation the group and every process
 * carrying the owner token get SIGTERM and the cancellation is rethrown once the command has
 * exited: the verified stop (`verifiedStop`) then escalates and checks that nothing survived.
 * When the cancellation is the end of the worker's shutdown grace period, whatever still runs
 * `stopGraceMs` later gets SIGKILL: a command that ignores SIGTERM must not hold the drain open
 * forever, and this worker's host may be the only one that can see the command's processes.
 */
export async function runSupervised(cmd: SupervisedCommand): Promise<number> {
  const ctx = Context.current();
  // a stop that landed before the spawn must not start the command at all
  if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
  // behind the cgroup's shell, a missing command would be an exit code of the agent's: refuse it as spawn would
  if (cmd.cgroupPath) assertExecutable(cmd.command, cmd.cwd, cmd.env.PATH ?? '');
  const output = openSync(cmd.outputFile, 'a');
  const start = cmd.cgroupPath ? inCgroup(cmd.cgroupPath, cmd.command, cmd.args) : cmd;
  const child = spawn(start.command, start.args, {
    cwd: cmd.cwd,
    env: { ...cmd.env, [OWNER_TOKEN_ENV]: cmd.ownerToken },
    detached: true,
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  exited.catch(() => undefined); // awaited below; a spawn error during the record must not go unhandled
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  let ticking = false;
  const tick = cmd.tick
    ? setInterval(() => {
        if (ticking) return;
        ticking = true;
        // a failed tick (database blip) only skips one lease renewal; the next tick tries again
        cmd
          .tick!.run()
          .catch(() => undefined)
          .finally(() => (ticking = false));
      }, cmd.tick.everyMs)
    : undefined;
  let killAfterGrace: NodeJS.Timeout | undefined;
  const onCancel = () => {
    const pgid = child.pid;
    if (!pgid) return;
    const owned = () =>
      ownedProcesses({ ownerToken: cmd.ownerToken, processGroupId: pgid, cgroupPath: cmd.cgroupPath });
    signalAll(owned(), [pgid], 'SIGTERM');
    const reason: unknown = ctx.cancellationSignal.reason;
    if (reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN') {
      killAfterGrace = setTimeout(() => {
        ctx.log.warn(
          'the worker is shutting down and the command outlived SIGTERM by the stop grace period: killing it',
          { pgid, survivors: owned().length },
        );
        signalAll(owned(), [pgid], 'SIGKILL', cmd.cgroupPath);
      }, cmd.stopGraceMs);
    }
  };
  ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  try {
    if (child.pid) await cmd.onSpawn(child.pid);
    const code = await exited;
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
    return code;
  } finally {
    clearInterval(beat);
    clearInterval(tick);
    clearTimeout(killAfterGrace);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
  }
}

/** Throws spawn's own ENOENT when `command` names no executable file (as a path, or on `PATH`). */
function assertExecutable(command: string, cwd: string, path: string): void {
  const candidates = command.includes('/') ? [resolve(cwd, command)] : path.split(':').map((d) => join(d, command));
  const executable = candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
  if (!executable)
    throw Object.assign(new Error(`spawn ${command} ENOENT`), {
      code: 'ENOENT',
      syscall: `spawn ${command}`,
      path: command,
    });
}

/** The end of an output file, for the automatic inspection of a failed run. */
export const outputTail = (file: string, maxBytes = 4_000): string => readFileTail(file, maxBytes) ?? '';
