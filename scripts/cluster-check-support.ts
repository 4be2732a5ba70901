/** The cluster check's plumbing: its log lines, assertions, last-in first-out teardown and treewarden processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '../testing/harness';
import type { SimulatedHost } from '../testing/simulated-hosts';
import { killOnExit, lineReader, spawnOrphanWatchdog } from './provision/child-processes';

/** A cluster on a loaded machine takes longer than a test's 30 s default. */
export const waitFor = <T>(what: string, probe: () => Promise<T | null | undefined | false>) =>
  eventually(what, probe, 120_000);
const ROOT = path.resolve(__dirname, '..');
const T0 = Date.now();
export const elapsed = (since = T0) => `${((Date.now() - since) / 1000).toFixed(1)}s`;
export const say = (line: string) => process.stdout.write(`[cluster-check +${elapsed()}] ${line}\n`);

/** Teardown steps, run last-in first-out exactly once (normal end, failure, or a signal). */
export const cleanups: { what: string; fn: () => Promise<unknown> }[] = [];
let tearingDown: Promise<void> | undefined;
export function teardown(): Promise<void> {
  return (tearingDown ??= (async () => {
    while (cleanups.length > 0) {
      const { what, fn } = cleanups.pop()!;
      try {
        await fn();
        say(`teardown: ${what}`);
      } catch (err) {
        say(`teardown: ${what} FAILED: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  })());
}

/** True once the teardown has begun (a later signal must not interrupt it). */
export const tearingDownStarted = () => tearingDown !== undefined;

export function check(ok: boolean, what: string, detail?: unknown): void {
  if (!ok)
    throw new Error(`assertion failed: ${what}${detail === undefined ? '' : `\n${JSON.stringify(detail, null, 2)}`}`);
  say(`ok: ${what}`);
}

export interface Proc {
  name: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<void>;
  /** the output line that made it ready */
  readyLine?: string;
  /** to the process itself, on a simulated host too (nsenter forwards no signal) */
  signal(sig: NodeJS.Signals): Promise<unknown>;
}

/**
 * A treewarden process (output to `<dir>/<name>.log`), stopped with SIGTERM (SIGKILL after 20 s) at teardown.
 * With `ready`, resolves once a line of its output satisfies it.
 */
export async function startProcess(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  dir: string,
  ready?: (line: string) => boolean,
  host?: SimulatedHost,
): Promise<Proc> {
  const logFile = path.join(dir, `${name}.log`);
  const out = fs.createWriteStream(logFile);
  const argv = [process.execPath, '--import', 'tsx', entry];
  // on a simulated host, signals go to the process itself: nsenter forwards none
  const inHost = host?.spawn(argv, env);
  const child = inHost?.child ?? spawn(argv[0], argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const signal = async (sig: NodeJS.Signals) => (inHost ? process.kill(await inHost.pid(), sig) : child.kill(sig));
  const unregister = killOnExit(child);
  const guard = child.pid === undefined ? undefined : spawnOrphanWatchdog(child.pid);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let isReady = false;
  let onReady: () => void = () => undefined;
  const readyPromise = new Promise<void>((resolve) => (onReady = resolve));
  const onLine = (line: string) => {
    out.write(`${line}\n`);
    if (!isReady && ready?.(line)) {
      isReady = true;
      proc.readyLine = line;
      onReady();
    }
  };
  const proc: Proc = { name, child, logFile, exited, signal };
  lineReader(child.stdout, onLine);
  lineReader(child.stderr, onLine);
  cleanups.push({
    what: `${name} (pid ${child.pid}) stopped`,
    fn: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        await signal('SIGTERM');
        if (await Promise.race([exited.then(() => false), sleep(20_000).then(() => true)])) await signal('SIGKILL');
      }
      await exited;
      unregister();
      if (guard?.pid !== undefined && guard.exitCode === null) process.kill(guard.pid, 'SIGKILL');
      await new Promise<void>((resolve) => out.end(() => resolve()));
    },
  });
  if (!ready) return proc;
  await Promise.race([
    readyPromise,
    exited.then(() => {
      throw new Error(
        `${name} exited before it was ready (code ${child.exitCode}); log: ${logFile}\n${tailOf(logFile)}`,
      );
    }),
    sleep(180_000).then(() => {
      if (!isReady) throw new Error(`${name} not ready after 180 s; log: ${logFile}\n${tailOf(logFile)}`);
    }),
  ]);
  return proc;
}

export function tailOf(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
