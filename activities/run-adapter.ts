/**
 * Executes a run through its agent's adapter. A `process` run is supervised: its own process
 * group, an owner token every descendant inherits, output and a progress journal in the run's
 * folder, a heartbeat, a lease and silence checks while it runs, and a verified stop.
 */
import { Context } from '@temporalio/activity';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { adapterOf, adapterSchema, launchOf, type CommandLine } from '../domain/adapter';
import { ACP_PRESERVED_EXIT, ACP_SUPERVISOR_MARK, firstLayerOf } from '../domain/acp-stop';
import { parseExitStatus } from '../domain/adoption';
import { apiUrlOf } from '../domain/config';
import { runEnvironment } from '../domain/run-env';
import { readCheckpoint, recordOutcome, stopOutcomeOf, type CheckpointFile } from '../domain/checkpoint';
import { parseEndReason } from '../domain/postmortem';
import { agentContext, parseDirective } from '../domain/run-directive';
import { hashToken, newTokenSecret } from '../domain/tokens';
import type { Deps } from '../runtime/deps';
import { untilStarted } from '../db/unstarted-transaction';
import { capsuleFor } from '../runs/capsule';
import { assertOwningHost } from '../processes/host-stops';
import { readSmallRunFile, runFiles, type RunFiles } from '../runs/run-files';
import { createWorkCgroup, removeCgroup } from '../processes/cgroups';
import { capOutputFile } from '../runs/output-file';
import { enterAdapter, requestStop, type RunOutcome } from '../runs/runs';
import { recordStopResult, superviseTick, type CpuSample } from '../runs/supervision';
import { cpuTicksOf, verifiedStop, type StopResult } from '../processes/process-table';
import { isLetGo, outputTail, runSupervised, sandboxPlace, type Supervision } from './supervised-process';

export async function executeRun(deps: Deps, runId: string): Promise<RunOutcome> {
  const run = await deps.db.run.findUniqueOrThrow({ where: { id: runId }, include: { agent: true } });
  const parsed = adapterSchema.safeParse(run.agent.adapter);
  if (!parsed.success) return { kind: 'error', error: `invalid adapter: ${parsed.error.message}` };
  const adapter = parsed.data;
  // a run that continues or replaces earlier work gets its capsule in its directive (and its file)
  const { directive: stored, problem } = parseDirective(run.directive);
  if (problem) deps.log.warn({ runId, problem }, 'run directive has an unexpected shape; it is ignored');
  const capsule = await capsuleFor(deps, run, stored);
  const directive = capsule ? { ...stored, capsule } : stored;
  if (capsule) await deps.db.run.update({ where: { id: runId }, data: { directive: directive as object } });
  if (adapter.type === 'noop') {
    return (await enterAdapter(deps, runId)) ? { kind: 'exited', exitCode: 0 } : { kind: 'stopped' };
  }
  const files = runFiles(runId, adapter.cwd ?? null);
  await mkdir(files.runDir, { recursive: true });
  // registered before runSupervised's own listener, so the mark precedes its SIGTERM: a checkpoint
  // older than the mark was not written in answer to this stop
  markStopsObserved(files);
  const ownerToken = run.ownerToken ?? newTokenSecret('two');
  const cgroupPath = createWorkCgroup(deps.containment, runId);
  // recorded before anything spawns, and refused once a stop is requested: a stop that read no
  // host then knows no process can start (its verified stop needs the host that spawned them)
  const { count } = await deps.db.run.updateMany({
    where: { id: runId, stopRequestedAt: null },
    data: { ownerToken, cgroupPath, host: hostname(), hostId: deps.hostId, workdir: adapter.cwd ?? files.runDir },
  });
  if (count === 0) {
    removeCgroup(cgroupPath);
    return { kind: 'stopped' };
  }
  const cwd = adapter.cwd ?? files.runDir;
  const runValues = {
    TREEWARDEN_RUN_ID: run.id,
    TREEWARDEN_JOURNAL_FILE: files.journal,
    TREEWARDEN_WRITER_LOCK: files.writerLock,
    TREEWARDEN_CHECKPOINT_FILE: files.checkpoint,
  };
  const envWith = (extra: Record<string, string>) =>
    runEnvironment(process.env, deps.config.TREEWARDEN_RUN_ENV_PASSTHROUGH, adapter.env, { ...runValues, ...extra });
  const tick = supervisorTick(deps, run, files);
  const command = (command: string, args: string[], env: Record<string, string>, exitFile: string | null) =>
    runSupervised({
      command,
      args,
      env,
      cwd,
      sandbox: deps.sandbox,
      place: sandboxPlace(deps.config, files, cwd),
      ownerToken,
      cgroupPath,
      outputFile: files.output,
      exitFile,
      tick,
      stopGraceMs: deps.config.TREEWARDEN_STOP_GRACE_MS,
      firstLayer: firstLayerOf(adapter),
      onSpawn: (pgid, startTime) =>
        deps.db.run
          .update({ where: { id: runId }, data: { processGroupId: pgid, processStartTime: startTime } })
          .then(() => undefined),
    });

  if (adapter.type === 'process' && adapter.prepare) {
    // a prepare step is short and repeatable: a worker that can no longer supervise it stops it (no exit file)
    const code = await command(adapter.prepare.command, adapter.prepare.args, envWith({}), null);
    if (code !== 0)
      return {
        kind: 'exited',
        exitCode: code,
        error: `prepare exited with ${code}`,
        outputTail: outputTail(files.output),
      };
  }
  if (!(await enterAdapter(deps, runId))) return { kind: 'stopped' };
  const secret = newTokenSecret('twr');
  await untilStarted(() =>
    deps.db.$transaction([
      deps.db.apiToken.deleteMany({ where: { runId } }),
      deps.db.apiToken.create({
        data: { tokenHash: hashToken(secret), kind: 'run', companyId: run.companyId, agentId: run.agentId, runId },
      }),
    ]),
  );
  await writeFile(files.context, JSON.stringify(agentContext(run.context, directive)), { mode: 0o600 });
  if (capsule) await writeFile(files.capsule, JSON.stringify(capsule), { mode: 0o600 });
  const launch = launchOf(adapter, ACP_SUPERVISOR);
  const exitCode = await command(
    launch.command,
    launch.args,
    envWith({
      TREEWARDEN_API_URL: apiUrlOf(deps.config),
      TREEWARDEN_RUN_TOKEN: secret,
      TREEWARDEN_ISSUE_ID: run.issueId,
      TREEWARDEN_AGENT_ID: run.agentId,
      TREEWARDEN_WAKE_REASON: run.wakeReason,
      TREEWARDEN_CONTEXT_FILE: files.context,
      ...(capsule ? { TREEWARDEN_CAPSULE_FILE: files.capsule } : {}),
      TREEWARDEN_OUTCOME_FILE: files.outcome,
      // the supervisor's mark (its agent does not inherit it): how a stop finds it
      ...(adapter.type === 'acp' ? { [ACP_SUPERVISOR_MARK]: '1', TREEWARDEN_ACP_MESSAGES: adapter.messages } : {}),
    }),
    files.exitStatus,
  );
  return exitedOutcome(files, cgroupPath, exitCode);
}

/**
 * An `acp` run's supervisor (acp/supervisor.ts, what bin/treewarden-acp runs), by absolute paths and this worker's own
 * node: its cwd is the run's workspace, and the sandbox shows treewarden's install read-only.
 */
const INSTALL_ROOT = join(__dirname, '..');
const ACP_SUPERVISOR: CommandLine = {
  command: process.execPath,
  args: [
    '--import',
    join(INSTALL_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs'),
    join(INSTALL_ROOT, 'acp', 'supervisor.ts'),
  ],
};

/** The outcome of an agent that exited, once its cgroup is cleared up. */
export function exitedOutcome(files: RunFiles, cgroupPath: string | null, exitCode: number): RunOutcome {
  // empty unless the agent left processes behind, which the orphan sweep stops (and then removes it)
  removeCgroup(cgroupPath);
  // an agent that ran out of context says so; the postmortem counts it
  const endReason = parseEndReason(readSmallRunFile(files.outcome, 4096));
  const reported = endReason ? { endReason } : {};
  return exitCode === 0
    ? { kind: 'exited', exitCode, ...reported }
    : { kind: 'exited', exitCode, outputTail: outputTail(files.output), ...reported };
}

/** What a run's supervisor does every tick, whichever worker supervises it: lease, silence, output cap, max length. */
export function supervisorTick(
  deps: Deps,
  run: { id: string; companyId: string; startedAt: Date | null },
  files: RunFiles,
): NonNullable<Supervision['tick']> {
  let lastCpu: CpuSample = { ticks: -1, at: null };
  const overdue = overdueStop(deps, run);
  return {
    everyMs: deps.config.TREEWARDEN_SUPERVISE_EVERY_MS,
    run: async () => {
      lastCpu = await superviseTick(deps, run.id, files, lastCpu, cpuTicksOf);
      const dropped = capOutputFile(files.output, deps.config.TREEWARDEN_RUN_OUTPUT_MAX_BYTES);
      if (dropped > 0)
        deps.log.info({ runId: run.id, dropped }, 'run output over its cap: the oldest part was dropped');
      await overdue();
    },
  };
}

/**
 * Past TREEWARDEN_RUN_MAX_MS after its start, the run is stopped like any other (a verified stop), once, under its
 * own stop kind; a stop already requested (an operator's, a hold's) keeps its kind.
 */
function overdueStop(deps: Deps, run: { id: string; companyId: string; startedAt: Date | null }) {
  const maxMs = deps.config.TREEWARDEN_RUN_MAX_MS;
  let requested = false;
  return async () => {
    if (requested || maxMs === undefined || !run.startedAt || Date.now() < run.startedAt.getTime() + maxMs) return;
    const { stopRequestedAt } = await deps.db.run.findUniqueOrThrow({ where: { id: run.id } });
    if (!stopRequestedAt) {
      deps.log.warn({ runId: run.id, maxMs }, 'run outlived TREEWARDEN_RUN_MAX_MS: stopping it');
      await requestStop(deps, run.id, { kind: 'max_duration', actor: { kind: 'system', companyId: run.companyId } });
    }
    // only once it is requested: a failed attempt (a database or Temporal blip) is tried again at the next tick
    requested = true;
  };
}

/**
 * The verified half of a stop (and the clean-up after a lost worker), on the run's own host (its
 * host queue; another host's /proc cannot see the processes): Temporal reports an
 * activity cancelled as soon as it is asked, while processes may still be unwinding or may have
 * left the group. Finds them by cgroup, group and owner token, escalates, verifies, records the result.
 */
export async function stopProcessGroup(deps: Deps, runId: string): Promise<StopResult> {
  const run = await deps.db.run.findUniqueOrThrow({
    where: { id: runId },
    select: {
      processGroupId: true,
      ownerToken: true,
      cgroupPath: true,
      workdir: true,
      adapterEntered: true,
      hostId: true,
      agent: { select: { adapter: true } },
    },
  });
  assertOwningHost(deps, 'run', runId, run.hostId);
  const ctx = Context.current();
  const files = run.ownerToken ? runFiles(runId, run.workdir) : null;
  // a stop that did not pass through the executing worker (it died) is observed here, before any signal
  if (files) markStopObserved(files);
  const firstLayer = firstLayerOf(adapterOf(run.agent.adapter));
  const result = await verifiedStop(
    run,
    files?.writerLock ?? null,
    deps.config.TREEWARDEN_STOP_GRACE_MS,
    () => ctx.heartbeat(),
    firstLayer,
  );
  const outcome = stopOutcomeOf({
    adapterEntered: run.adapterEntered,
    sigtermVerdict: result.attempts[0]?.verdict ?? result.verdict,
    checkpoint: files
      ? readCheckpoint(checkpointFile(files.checkpoint), modifiedAtMs(files.stopObserved) ?? Number.POSITIVE_INFINITY)
      : { ok: false, problem: 'missing' },
    // the supervisor's exit status, recorded by the start shell where the agent cannot write
    supervisorVouched:
      firstLayer && files ? parseExitStatus(readSmallRunFile(files.exitStatus, 16)) === ACP_PRESERVED_EXIT : null,
  });
  const recorded = { ...result, ...recordOutcome(outcome) };
  if (result.verdict === 'terminal-clean') removeCgroup(run.cgroupPath);
  await recordStopResult(deps, runId, recorded);
  return recorded;
}

/** Marks the stop when this attempt is cancelled by one (a worker letting go of the agent is no stop). */
export function markStopsObserved(files: RunFiles): void {
  const signal = Context.current().cancellationSignal;
  signal.addEventListener('abort', () => isLetGo(signal.reason) || markStopObserved(files), { once: true });
}

/** Creates the stop mark once; a later stop of the same run keeps the first mark. */
function markStopObserved(files: RunFiles) {
  try {
    writeFileSync(files.stopObserved, new Date().toISOString(), { flag: 'wx' });
  } catch {
    // already marked (EEXIST), or the run folder is gone: then no checkpoint can be newer either
  }
}

function modifiedAtMs(file: string): number | null {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** The checkpoint as written, size-checked before it is read: an agent is untrusted and may write anything there. */
function checkpointFile(file: string): CheckpointFile | null {
  try {
    const stat = statSync(file);
    if (stat.size > MAX_CHECKPOINT_BYTES) return { text: null, writtenAtMs: stat.mtimeMs };
    return { text: readFileSync(file, 'utf8'), writtenAtMs: stat.mtimeMs };
  } catch {
    return null;
  }
}

/** a checkpoint names a session, not a transcript */
const MAX_CHECKPOINT_BYTES = 64 * 1024;
