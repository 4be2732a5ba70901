/**
 * What the agent sandbox (processes/sandbox.ts) adds to a run's start and to its stop, against the same command
 * unsandboxed, in one process on one host: `npx tsx bench/sandbox-cost.ts [rounds]`. Each round starts the command
 * the way a worker does (the start shell of processes/cgroups.ts, in its own process group, in the sandbox or not),
 * times the spawn to the agent's first line of output, then SIGTERM to the group and times it to the start shell's
 * exit. Medians and p90s, in ms, as JSON.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { supervisedStart } from '../processes/cgroups';
import { startSandboxGate } from '../processes/sandbox-gate';
import { detectSandbox, sandboxedCommand } from '../processes/sandbox';
import { runFiles, sandboxGateDir } from '../runs/run-files';

const AGENT = ['sh', ['-c', 'echo first; trap "exit 0" TERM; sleep 600 & wait']] as const;

/** this host's sandbox, probed once (a probe is a namespace of its own, not part of any start) */
const sandbox = detectSandbox('on', []);

async function once(sandboxed: boolean): Promise<{ start: number; stop: number }> {
  if (sandbox.kind !== 'namespaces') throw new Error(sandbox.reason);
  const files = runFiles(randomUUID(), null);
  mkdirSync(files.records, { recursive: true });
  const place = {
    runDir: files.runDir,
    records: files.records,
    workspace: files.runDir,
    apiUrl: 'http://127.0.0.1:8787',
    gateDir: sandboxGateDir('sandbox-cost'),
  };
  const inner = sandboxed
    ? sandboxedCommand(sandbox, place, AGENT[0], [...AGENT[1]])
    : { command: AGENT[0], args: [...AGENT[1]] };
  const start = supervisedStart(inner.command, inner.args, { cgroupPath: null, exitFile: files.exitStatus });
  const began = performance.now();
  const child = spawn(start.command, start.args, {
    cwd: files.runDir,
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const started = performance.now() - began;
  const stopping = performance.now();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
  const stopped = performance.now() - stopping;
  rmSync(files.runDir, { recursive: true, force: true });
  return { start: started, stop: stopped };
}

/** The median and the 90th percentile, in ms to a tenth. */
function spread(values: number[]): { medianMs: number; p90Ms: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10;
  return { medianMs: at(0.5), p90Ms: at(0.9) };
}

async function main() {
  const rounds = Number(process.argv[2] ?? 30);
  const gate = await startSandboxGate(sandboxGateDir('sandbox-cost'), () => 'http://127.0.0.1:8787');
  const samples = {
    unsandboxed: [] as { start: number; stop: number }[],
    sandboxed: [] as { start: number; stop: number }[],
  };
  // interleaved, so a busy moment of the host weighs on both alike
  for (let i = 0; i < rounds; i++) {
    samples.unsandboxed.push(await once(false));
    samples.sandboxed.push(await once(true));
  }
  await gate.close();
  const summary = Object.fromEntries(
    Object.entries(samples).map(([kind, runs]) => [
      kind,
      { start: spread(runs.map((r) => r.start)), stop: spread(runs.map((r) => r.stop)) },
    ]),
  );
  process.stdout.write(`${JSON.stringify({ rounds, ...summary }, null, 2)}\n`);
  process.exit(0);
}

void main();
