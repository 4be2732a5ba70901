/**
 * One supervised command: its own process group (and cgroup), the owner token in its environment, output to a file,
 * a heartbeat while it lives, and a verified stop (seed 003, fixes 1 and 10). A run's agent can also outlive the
 * worker that supervises it: the worker lets go of it, and the next worker of the host adopts it (issue 25).
 */
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { spawn } from 'node:child_process';
import { accessSync, closeSync, constants, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AGENT_LET_GO, LET_GO_REASONS } from '../domain/adoption';
import { adoptedAgentState, type AdoptedAgent } from '../processes/adopted-agent';
import { supervisedStart } from '../processes/cgroups';
import {
  assertCanRunAgents,
  sandboxedCommand,
  sandboxEnvironment,
  SandboxUnavailableError,
  type Sandbox,
  type SandboxPlace,
} from '../processes/sandbox';
import { readFileTail } from '../runs/output-file';
import { sandboxGateDir, type RunFiles } from '../runs/run-files';
import { apiUrlOf, type Config } from '../domain/config';
import {
  OWNER_TOKEN_ENV,
  ownedProcesses,
  processStartTime,
  recordedGroup,
  signalAll,
  signalFirstLayer,
} from '../processes/process-table';
import type { FirstLayer } from '../domain/acp-stop';

const HEARTBEAT_EVERY_MS = 1_000;
/** how often an adopted agent, whose exit no event reports, is looked for in its cgroup or /proc */
const ADOPTED_EXIT_POLL_MS = 250;

/** What a supervisor keeps up while a command runs, whether it started the command or adopted it. */
export interface Supervision {
  ownerToken: string;
  /** the run's or job's cgroup (processes/cgroups.ts); null where there are none */
  cgroupPath: string | null;
  /** SIGTERM → SIGKILL escalation when the worker's shutdown grace period ends before the command */
  stopGraceMs: number;
  /** called about every `everyMs` while the command runs (lease renewal, silence checks) */
  tick?: { everyMs: number; run(): Promise<void> };
  /**
   * With an exit file, the command outlives a worker that can no longer supervise it (its shutdown, a timed-out
   * attempt): the worker lets go and the host's next worker adopts it. Without one (a job, a run's prepare step),
   * the command is stopped then, as a stop would.
   */
  exitFile: string | null;
  /** an `acp` run's supervisor: a stop signals it alone, and it ends its agent itself (domain/acp-stop.ts) */
  firstLayer?: FirstLayer | null;
}

export interface SupervisedCommand extends Supervision {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** the host's sandbox and where this command lives in it (processes/sandbox.ts) */
  sandbox: Sandbox;
  place: SandboxPlace;
  outputFile: string;
  /** records the group and its start time before the wait, so a stop (or an adoption) can always find it */
  onSpawn(pgid: number, startTime: string | null): Promise<void>;
}

/** Where a run's or job's command lives in its sandbox: its folder, its workspace, its service's API and gate. */
export const sandboxPlace = (
  config: Pick<Config, 'TREEWARDEN_API_URL' | 'TREEWARDEN_API_PORT' | 'TREEWARDEN_TASK_QUEUE'>,
  files: Pick<RunFiles, 'runDir' | 'records'>,
  workspace: string,
): SandboxPlace => ({
  runDir: files.runDir,
  records: files.records,
  workspace,
  apiUrl: apiUrlOf(config),
  gateDir: sandboxGateDir(config.TREEWARDEN_TASK_QUEUE),
});

/** True when a cancellation only means this worker lets go of the command, not that anyone asked to stop it. */
export const isLetGo = (reason: unknown): boolean =>
  reason instanceof CancelledFailure && LET_GO_REASONS.has(reason.message);

/** Runs the command and resolves with its exit code (see `supervise` for cancellation). */
export async function runSupervised(cmd: SupervisedCommand): Promise<number> {
  const ctx = Context.current();
  // a stop that landed before the spawn must not start the command at all
  if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
  // behind the start shell, a missing command would be an exit code of the agent's: refuse it as spawn would
  assertExecutable(cmd.command, cmd.cwd, cmd.env.PATH ?? '');
  mkdirSync(cmd.place.records, { recursive: true });
  if (cmd.exitFile) rmSync(cmd.exitFile, { force: true });
  const inner = inSandbox(cmd);
  const output = openSync(cmd.outputFile, 'a');
  const start = supervisedStart(inner.command, inner.args, cmd);
  const child = spawn(start.command, start.args, {
    cwd: cmd.cwd,
    env: { ...inner.env, [OWNER_TOKEN_ENV]: cmd.ownerToken },
    detached: true,
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  exited.catch(() => undefined); // awaited below; a spawn error during the record must not go unhandled
  // a worker that lets go must not take the agent with it: nothing of the agent may keep this process waiting
  if (cmd.exitFile) child.unref();
  const leader = { pid: child.pid ?? 0, startTime: child.pid ? processStartTime(child.pid) : null };
  if (child.pid) await cmd.onSpawn(leader.pid, leader.startTime);
  return supervise(leader, () => exited, cmd);
}

/**
 * Supervises an agent this worker did not start, as its run recorded it (processes/adopted-agent.ts judges whether it
 * runs): resolves with the status its start shell recorded, and fails when it ended without recording one.
 */
export function superviseAdopted(agent: AdoptedAgent, supervision: Supervision) {
  return supervise(
    { pid: agent.pid, startTime: agent.startTime },
    async (done) => {
      let state = adoptedAgentState(agent);
      while (!done.aborted && state.kind === 'running') {
        await new Promise((r) => setTimeout(r, ADOPTED_EXIT_POLL_MS));
        state = adoptedAgentState(agent);
      }
      if (state.kind === 'exited') return state.exitCode;
      throw ApplicationFailure.nonRetryable(
        `the agent (pid ${agent.pid}) ended while no worker supervised it and recorded no exit status`,
        'AgentEndedUnsupervised',
      );
    },
    supervision,
  );
}

/**
 * Heartbeats and ticks until the command exits. On a stop (cancellation) the group and every process carrying the
 * owner token get SIGTERM and the cancellation is rethrown once the command has exited: the verified stop
 * (`verifiedStop`) then escalates and checks that nothing survived. On a let-go (see `isLetGo`) a command with an
 * exit file is left running and the attempt fails as `AgentLetGo`, which the workflow answers with an adoption; any
 * other command is stopped, and at the end of a worker's shutdown grace whatever still runs `stopGraceMs` later gets
 * SIGKILL: it must not hold the drain open forever, and this worker's host may be the only one that sees it.
 */
async function supervise(
  leader: { pid: number; startTime: string | null },
  waitForExit: (done: AbortSignal) => Promise<number>,
  s: Supervision,
): Promise<number> {
  const pgid = leader.pid;
  const ctx = Context.current();
  const done = new AbortController();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  let ticking = false;
  const tick = s.tick
    ? setInterval(() => {
        if (ticking) return;
        ticking = true;
        // a failed tick (database blip) only skips one lease renewal; the next tick tries again
        s.tick!.run()
          .catch(() => undefined)
          .finally(() => (ticking = false));
      }, s.tick.everyMs)
    : undefined;
  let killAfterGrace: NodeJS.Timeout | undefined;
  let letGo: (why: string) => void = () => undefined;
  const lettingGo = new Promise<never>((_, reject) => {
    letGo = (why) =>
      reject(
        ApplicationFailure.nonRetryable(
          `the worker let go of the running agent (${why}); its host adopts it`,
          AGENT_LET_GO,
        ),
      );
  });
  // its group by identity: an adopted agent's pid, signalled long after it was recorded, may name another process
  const owner = {
    ownerToken: s.ownerToken,
    processGroupId: pgid,
    processStartTime: leader.startTime,
    cgroupPath: s.cgroupPath,
  };
  const owned = () => ownedProcesses(owner);
  const onCancel = () => {
    const reason: unknown = ctx.cancellationSignal.reason;
    if (s.exitFile && isLetGo(reason)) {
      ctx.log.info('letting go of the running agent: it goes on, and a worker of this host adopts it', { pgid });
      letGo((reason as CancelledFailure).message);
      return;
    }
    // the first layer's processes alone when it has some left; the verified stop (stopProcessGroup) does the rest
    const leads = s.firstLayer ? signalFirstLayer(owner, s.firstLayer) : [];
    if (leads.length === 0) signalAll(owned(), [recordedGroup(owner)], 'SIGTERM');
    if (reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN') {
      killAfterGrace = setTimeout(() => {
        ctx.log.warn(
          'the worker is shutting down and the command outlived SIGTERM by the stop grace period: killing it',
          { pgid, survivors: owned().length },
        );
        signalAll(owned(), [recordedGroup(owner)], 'SIGKILL', s.cgroupPath);
      }, s.stopGraceMs);
    }
  };
  ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  try {
    const code = await Promise.race([waitForExit(done.signal), lettingGo]);
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
    return code;
  } finally {
    done.abort();
    clearInterval(beat);
    clearInterval(tick);
    clearTimeout(killAfterGrace);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
  }
}

/**
 * The command as it starts in the host's sandbox, with the environment that points it at the sandbox's loopback. No
 * agent runs unconfined unless TREEWARDEN_SANDBOX=off accepted it: the refusal names why and is never retried.
 */
function inSandbox(cmd: SupervisedCommand): { command: string; args: string[]; env: Record<string, string> } {
  try {
    assertCanRunAgents(cmd.sandbox);
    if (cmd.sandbox.kind !== 'namespaces') return cmd;
    const env = { ...cmd.env, ...sandboxEnvironment(cmd.place.apiUrl) };
    return { ...sandboxedCommand(cmd.sandbox, cmd.place, cmd.command, cmd.args), env };
  } catch (error) {
    if (!(error instanceof SandboxUnavailableError)) throw error;
    throw ApplicationFailure.nonRetryable(error.message, error.name);
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
