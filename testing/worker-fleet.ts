/**
 * Real worker processes (workers/main.ts, as deployed) against a harness's stack, so tests can
 * `kill -9` one in the middle of an activity (or SIGTERM it, to drain) and start a replacement.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Client } from '@temporalio/client';
import { REPO_ROOT, sharedWorkflowBundleFile, TMP_DIR } from './stack';
import { workflowBundle, type Harness } from './harness';

export interface WorkerProcess {
  pid: number;
  /** Temporal's default worker identity, as reported in pending activities */
  identity: string;
  /** its metrics server's /healthz */
  healthz: string;
  /** resolves with the exit code (null when a signal ended the process) */
  exited: Promise<number | null>;
  /** its last log lines and the end of its stderr */
  said(): string;
}

export interface WorkerFleet {
  workers: WorkerProcess[];
  /** `env` overrides the harness's environment for this process (e.g. TREEWARDEN_SHUTDOWN_GRACE_MS) */
  start(env?: Record<string, string>): Promise<WorkerProcess>;
  /** SIGKILL: no drain, no cleanup, exactly like a crashed host */
  kill(worker: WorkerProcess): Promise<void>;
  /** SIGTERM by default, as a deploy or scale-down sends it; resolves with the exit code */
  stop(worker: WorkerProcess, signal?: NodeJS.Signals): Promise<number | null>;
  close(): Promise<void>;
}

let bundleFile: Promise<string> | undefined;
/** The run's bundle (or one per test file), loaded by every worker process as production workers load theirs. */
export function bundlePath(): Promise<string> {
  const shared = sharedWorkflowBundleFile();
  if (shared) return Promise.resolve(shared);
  bundleFile ??= workflowBundle().then(({ code }) => {
    mkdirSync(TMP_DIR, { recursive: true });
    const file = join(TMP_DIR, `workflow-bundle-${process.pid}.js`);
    writeFileSync(file, code);
    return file;
  });
  return bundleFile;
}

export function workerFleet(h: Harness): WorkerFleet {
  const running = new Map<number, { child: ChildProcess; worker: WorkerProcess }>();
  /** workers the test itself ended: their exit is expected */
  const stopping = new Set<number>();
  const fleet: WorkerFleet = {
    get workers() {
      return [...running.values()].map((r) => r.worker);
    },
    async start(env = {}) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...h.env, TREEWARDEN_WORKFLOW_BUNDLE: await bundlePath(), LOG_LEVEL: 'info', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const stderr: string[] = [];
      child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
      const lastLines: string[] = [];
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      let healthz = '';
      const ready = new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          lastLines.push(line);
          if (lastLines.length > 20) lastLines.shift();
          if (line.includes('"msg":"metrics server listening"'))
            healthz = (JSON.parse(line) as { healthz: string }).healthz;
          if (line.includes('"msg":"worker started"')) resolve();
        });
        void exited.then(() =>
          reject(new Error(`worker process exited before it was ready: ${stderr.join('').slice(-2000)}`)),
        );
      });
      await ready;
      const said = () => [lastLines.join('\n'), stderr.join('').slice(-2000)].join('\n');
      const worker = { pid: child.pid!, identity: `${child.pid}@${hostname()}`, healthz, exited, said };
      running.set(worker.pid, { child, worker });
      void exited.then((code) => {
        // a worker that dies on its own says why: its last log lines and its stderr
        if (running.delete(worker.pid) && !stopping.has(worker.pid))
          console.error(
            `worker ${worker.pid} exited on its own (code ${code}):`,
            lastLines,
            stderr.join('').slice(-2000),
          );
      });
      return worker;
    },
    async kill(worker) {
      stopping.add(worker.pid);
      process.kill(worker.pid, 'SIGKILL');
      await worker.exited;
    },
    async stop(worker, signal = 'SIGTERM') {
      stopping.add(worker.pid);
      process.kill(worker.pid, signal);
      const code = await worker.exited;
      // a drain that did not end cleanly says why: its last log lines and its stderr
      if (code !== 0) console.error(`worker ${worker.pid} stopped by ${signal} exited ${code}:\n${worker.said()}`);
      return code;
    },
    async close() {
      for (const { child, worker } of running.values()) {
        stopping.add(worker.pid);
        child.kill('SIGKILL');
        await worker.exited;
      }
    },
  };
  return fleet;
}

/** The identity of the worker running `activityType` for a workflow, once it has started. */
export async function workerRunning(client: Client, workflowId: string, activityType: string): Promise<string | null> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const pending = description.raw.pendingActivities ?? [];
  const started = pending.find(
    (a) => a.activityType?.name === activityType && a.lastWorkerIdentity && Number(a.state) === 2 /* STARTED */,
  );
  return started?.lastWorkerIdentity ?? null;
}
