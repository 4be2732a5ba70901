/**
 * Several hosts on one machine (docs: testing-like-users §2): each host is a PID + UTS namespace
 * whose init is a shell that never execs the worker, so a worker can die alone and leave its
 * agents running. Workers enter the host with nsenter; from this (the root) namespace every host's
 * processes stay visible for ground truth, under root-namespace pids.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { REPO_ROOT, TMP_DIR } from './stack';
import { eventually } from './harness';
import { bundlePath } from './worker-fleet';

/** Namespaces need root and util-linux: without them the fleet suite fails here, loudly; it never skips. */
export function requireNamespaces(): void {
  if (process.getuid?.() !== 0)
    throw new Error(
      'the fleet suite simulates hosts with `unshare --pid --uts --mount-proc`, which needs root: run it as root',
    );
  for (const tool of ['unshare', 'nsenter', 'setsid']) {
    try {
      execFileSync('which', [tool], { stdio: 'ignore' });
    } catch {
      throw new Error(`the fleet suite needs ${tool} (util-linux) to simulate hosts`);
    }
  }
}

export interface HostWorker {
  /** root-namespace pid of the worker's node process */
  pid: number;
  hostId: string;
  /** Temporal's default worker identity, <pid in its host>@<host name>, as pending activities report it */
  identity: string;
  exited: Promise<number | null>;
}

export interface SimulatedHost {
  name: string;
  /**
   * Runs `argv` inside this host, in the repository. nsenter forks it and forwards no signal, so
   * signal `pid()` (the process's root-namespace pid), never the returned child.
   */
  spawn(argv: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; pid: () => Promise<number> };
  startWorker(env: Record<string, string>): Promise<HostWorker>;
  /** SIGKILL of the worker's node process only: its agents live on in the host */
  killWorker(worker: HostWorker): Promise<void>;
  /** SIGTERM, as a process manager's restart sends it: the worker drains, then exits with the code returned */
  stopWorker(worker: HostWorker): Promise<number | null>;
  close(): Promise<void>;
}

const childrenOf = (ppid: number) =>
  readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid;
      } catch {
        return false;
      }
    })
    .map(Number);

export async function simulatedHost(name: string): Promise<SimulatedHost> {
  const unshare = spawn(
    'setsid',
    [
      'unshare',
      '--uts',
      '--pid',
      '--fork',
      '--mount-proc',
      'sh',
      '-c',
      `hostname ${name}; echo ready; while :; do sleep 3600; done`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    unshare.stdout!.once('data', () => resolve());
    unshare.once('exit', (code) => reject(new Error(`host ${name} did not start (unshare exited ${code})`)));
  });
  const init = await eventually(`the init of host ${name}`, async () => childrenOf(unshare.pid!)[0]);
  const children = new Set<ChildProcess>();
  const host: SimulatedHost = {
    name,
    spawn(argv, env) {
      const child = spawn('nsenter', ['-t', String(init), '-p', '-u', '-m', `--wd=${REPO_ROOT}`, ...argv], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      void new Promise((resolve) => child.once('exit', resolve)).then(() => children.delete(child));
      let pid: Promise<number> | undefined;
      return {
        child,
        pid: () =>
          (pid ??= eventually(`the process nsenter started on ${name}`, async () => childrenOf(child.pid!)[0])),
      };
    },
    async startWorker(env) {
      const { child, pid: nodePid } = host.spawn([process.execPath, '--import', 'tsx', 'workers/main.ts'], {
        ...process.env,
        ...env,
        TREEWARDEN_WORKFLOW_BUNDLE: await bundlePath(),
        LOG_LEVEL: 'info',
      });
      // every worker's log, kept for the post-mortem of a failed run (.tmp/fleet-<jest pid>-<host>.log)
      mkdirSync(TMP_DIR, { recursive: true });
      const log = createWriteStream(join(TMP_DIR, `fleet-${process.pid}-${name}.log`), { flags: 'a' });
      child.stdout!.pipe(log, { end: false });
      const stderr: string[] = [];
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr.push(chunk.toString());
        log.write(chunk);
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const started = await new Promise<{ hostId: string; pid: number; hostname: string }>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line.includes('"msg":"worker started"'))
            resolve(JSON.parse(line) as { hostId: string; pid: number; hostname: string });
        });
        void exited.then(() =>
          reject(new Error(`worker on ${name} exited before it was ready: ${stderr.join('').slice(-2000)}`)),
        );
      });
      return { pid: await nodePid(), hostId: started.hostId, identity: `${started.pid}@${started.hostname}`, exited };
    },
    async killWorker(worker) {
      process.kill(worker.pid, 'SIGKILL');
      await worker.exited;
    },
    stopWorker(worker) {
      process.kill(worker.pid, 'SIGTERM');
      return worker.exited;
    },
    async close() {
      // the init's death takes everything in the namespace with it
      process.kill(init, 'SIGKILL');
      unshare.kill('SIGKILL');
      for (const child of children) child.kill('SIGKILL');
    },
  };
  return host;
}

/**
 * Ground truth from the root namespace: live processes carrying this owner token, with their pid inside their host
 * (the namespace level below this machine's: an agent's sandbox nests a PID namespace of its own below the host's).
 */
export function processesOwnedBy(ownerToken: string): { pid: number; pidOnHost: number; command: string }[] {
  const needle = `TREEWARDEN_OWNER_TOKEN=${ownerToken}`;
  const found: { pid: number; pidOnHost: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (/^State:\s+[ZX]/m.test(status)) continue;
      if (!readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(needle)) continue;
      const nspid = /^NSpid:\s+(.+)$/m.exec(status)![1].trim().split(/\s+/).map(Number);
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      found.push({ pid: Number(entry), pidOnHost: nspid[Math.min(1, nspid.length - 1)], command });
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** A workflow's history as one line per event (type, activity, task queue), for the message of a failed wait. */
export async function historyOutline(client: Client, workflowId: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .map((e) => {
      const scheduled = e.activityTaskScheduledEventAttributes;
      const failed =
        e.activityTaskFailedEventAttributes?.failure?.message ??
        e.activityTaskTimedOutEventAttributes?.failure?.message;
      const at = e.eventTime?.seconds ? new Date(Number(e.eventTime.seconds) * 1000).toISOString().slice(11, 19) : '';
      const where = scheduled ? ` ${scheduled.activityType?.name} on ${scheduled.taskQueue?.name}` : '';
      return `${at} ${temporal.api.enums.v1.EventType[e.eventType ?? 0]}${where}${failed ? ` (${failed})` : ''}`;
    })
    .join('\n');
}
