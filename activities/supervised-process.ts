/**
 * One supervised command: its own process group, the owner token in its environment, output to
 * a file, a heartbeat while it lives, and a verified stop (seed 003, fixes 1 and 10).
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { OWNER_TOKEN_ENV, ownedProcesses, signalAll, writersAlive, type ProcessInfo } from '../services/process-table';

const HEARTBEAT_EVERY_MS = 1_000;
/** after SIGKILL the kernel reaps within milliseconds; this only bounds a pathological wait */
const KILL_SETTLE_MS = 2_000;

export interface ProcessOwner {
  ownerToken: string | null;
  processGroupId: number | null;
}

export interface SupervisedCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  ownerToken: string;
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
  const output = openSync(cmd.outputFile, 'a');
  const child = spawn(cmd.command, cmd.args, { cwd: cmd.cwd, env: { ...cmd.env, [OWNER_TOKEN_ENV]: cmd.ownerToken }, detached: true, stdio: ['ignore', output, output] });
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
        cmd.tick!.run().catch(() => undefined).finally(() => (ticking = false));
      }, cmd.tick.everyMs)
    : undefined;
  let killAfterGrace: NodeJS.Timeout | undefined;
  const onCancel = () => {
    const pgid = child.pid;
    if (!pgid) return;
    const owned = () => ownedProcesses({ ownerToken: cmd.ownerToken, processGroupId: pgid });
    signalAll(owned(), [pgid], 'SIGTERM');
    const reason: unknown = ctx.cancellationSignal.reason;
    if (reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN') {
      killAfterGrace = setTimeout(() => {
        ctx.log.warn('the worker is shutting down and the command outlived SIGTERM by the stop grace period: killing it', { pgid, survivors: owned().length });
        signalAll(owned(), [pgid], 'SIGKILL');
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

export interface StopAttempt {
  signal: 'SIGTERM' | 'SIGKILL';
  verdict: 'terminal-clean' | 'stop-partial';
  survivors: Pick<ProcessInfo, 'pid' | 'pgid' | 'command'>[];
  writersAlive: number;
}

export interface StopResult {
  verdict: 'terminal-clean' | 'stop-partial';
  attempts: StopAttempt[];
  verifiedAt: string;
}

/**
 * A stop is clean only when the owner is gone, no descendant lives (in the group or, having left
 * it by setsid or a double fork, by owner token) and no writer holds the lock. SIGTERM first and
 * a grace period; survivors are reported as `stop-partial`, then SIGKILLed and verified again.
 */
export async function verifiedStop(owner: ProcessOwner, lockFile: string | null, graceMs: number, beat: () => void): Promise<StopResult> {
  const attempts: StopAttempt[] = [];
  const survey = (signal: StopAttempt['signal']): StopAttempt => {
    const survivors = ownedProcesses(owner).map(({ pid, pgid, command }) => ({ pid, pgid, command }));
    const writers = writersAlive(lockFile).length;
    return { signal, verdict: survivors.length === 0 && writers === 0 ? 'terminal-clean' : 'stop-partial', survivors, writersAlive: writers };
  };
  const waitUntilGone = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && (ownedProcesses(owner).length > 0 || writersAlive(lockFile).length > 0)) {
      beat();
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  signalAll(ownedProcesses(owner), [owner.processGroupId], 'SIGTERM');
  await waitUntilGone(graceMs);
  attempts.push(survey('SIGTERM'));
  if (attempts[0].verdict === 'stop-partial') {
    // a writer that is ours is among the owned processes; one that is not ours is reported, never signalled
    signalAll(ownedProcesses(owner), [owner.processGroupId], 'SIGKILL');
    await waitUntilGone(KILL_SETTLE_MS);
    attempts.push(survey('SIGKILL'));
  }
  return { verdict: attempts[attempts.length - 1].verdict, attempts, verifiedAt: new Date().toISOString() };
}

/** The last lines of an output file, for the automatic inspection of a failed run. */
export function outputTail(file: string, maxBytes = 4_000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(-maxBytes);
  } catch {
    return '';
  }
}
