/**
 * Executes a run through its agent's adapter. A `process` run gets its own process group, so a
 * stop signals exactly its tree; the activity heartbeats so a lost worker is noticed and a
 * Temporal cancellation (the stop) reaches it.
 */
import { Context } from '@temporalio/activity';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterSchema } from '../domain/adapter';
import { hashToken, newTokenSecret } from '../domain/tokens';
import type { Deps } from '../services/deps';
import { enterAdapter, type RunOutcome } from '../services/runs';

const HEARTBEAT_EVERY_MS = 1_000;

export async function executeRun(deps: Deps, runId: string): Promise<RunOutcome> {
  const run = await deps.db.run.findUniqueOrThrow({ where: { id: runId }, include: { agent: true } });
  const parsed = adapterSchema.safeParse(run.agent.adapter);
  if (!parsed.success) return { kind: 'error', error: `invalid adapter: ${parsed.error.message}` };
  const adapter = parsed.data;
  if (adapter.type === 'noop') {
    return (await enterAdapter(deps, runId)) ? { kind: 'exited', exitCode: 0 } : { kind: 'stopped' };
  }
  const workdir = await mkdtemp(join(tmpdir(), `treewarden-run-${runId}-`));
  try {
    if (adapter.prepare) {
      const code = await runCommand(runId, adapter.prepare.command, adapter.prepare.args, { cwd: adapter.cwd ?? workdir, env: { ...process.env, ...adapter.env } }, deps);
      if (code !== 0) return { kind: 'exited', exitCode: code, error: `prepare exited with ${code}` };
    }
    if (!(await enterAdapter(deps, runId))) return { kind: 'stopped' };
    const secret = newTokenSecret('twr');
    await deps.db.$transaction([
      deps.db.apiToken.deleteMany({ where: { runId } }),
      deps.db.apiToken.create({ data: { tokenHash: hashToken(secret), kind: 'run', companyId: run.companyId, agentId: run.agentId, runId } }),
    ]);
    const contextFile = join(workdir, 'context.json');
    await writeFile(contextFile, JSON.stringify(run.context ?? {}), { mode: 0o600 });
    const env = {
      ...process.env,
      ...adapter.env,
      TREEWARDEN_API_URL: deps.config.TREEWARDEN_API_URL ?? `http://127.0.0.1:${deps.config.TREEWARDEN_API_PORT}`,
      TREEWARDEN_RUN_TOKEN: secret,
      TREEWARDEN_RUN_ID: run.id,
      TREEWARDEN_ISSUE_ID: run.issueId,
      TREEWARDEN_AGENT_ID: run.agentId,
      TREEWARDEN_WAKE_REASON: run.wakeReason,
      TREEWARDEN_CONTEXT_FILE: contextFile,
    };
    const exitCode = await runCommand(runId, adapter.command, adapter.args, { cwd: adapter.cwd ?? workdir, env }, deps);
    return { kind: 'exited', exitCode };
  } finally {
    await rm(workdir, { recursive: true, force: true });
  }
}

/**
 * Spawns a command in its own process group and waits for it, heartbeating. The group is
 * recorded on the run before the wait, so a stop can always find it. On cancellation the whole
 * group gets SIGTERM, then SIGKILL after the grace period, and the cancellation is rethrown so
 * the workflow sees a stop, not an exit.
 */
async function runCommand(runId: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }, deps: Deps): Promise<number> {
  const ctx = Context.current();
  // a stop that landed before the spawn must not start the command at all
  if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  exited.catch(() => undefined); // awaited below; a spawn error during the record must not go unhandled
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  const onCancel = () => {
    if (!child.pid) return;
    const pgid = child.pid;
    signalGroup(pgid, 'SIGTERM');
    setTimeout(() => signalGroup(pgid, 'SIGKILL'), deps.config.TREEWARDEN_STOP_GRACE_MS).unref();
  };
  ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  try {
    if (child.pid) await deps.db.run.update({ where: { id: runId }, data: { processGroupId: child.pid } });
    const code = await exited;
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
    return code;
  } finally {
    clearInterval(beat);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
  }
}

/** Sends `signal` (0 only probes) to a process group; false when the group no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The verified half of a stop: Temporal reports an activity cancelled as soon as it is asked,
 * while the process may still be unwinding. This waits until the run's process group is gone,
 * escalating SIGTERM to SIGKILL after the grace period, and heartbeats while it waits.
 */
export async function stopProcessGroup(deps: Deps, runId: string): Promise<{ pgid: number | null; escalated: boolean }> {
  const run = await deps.db.run.findUniqueOrThrow({ where: { id: runId }, select: { processGroupId: true } });
  const pgid = run.processGroupId;
  if (!pgid) return { pgid: null, escalated: false };
  const ctx = Context.current();
  const deadline = Date.now() + deps.config.TREEWARDEN_STOP_GRACE_MS;
  let escalated = false;
  while (signalGroup(pgid, 0)) {
    if (!escalated && Date.now() > deadline) {
      escalated = true;
      signalGroup(pgid, 'SIGKILL');
    }
    ctx.heartbeat({ pgid, escalated });
    await new Promise((r) => setTimeout(r, 100));
  }
  return { pgid, escalated };
}
