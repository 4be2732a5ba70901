/**
 * @module Adoption's host half (issue 25): an adopting worker is not the agent's parent, so it judges from this host
 * whether the agent still runs. With real start shells (processes/cgroups.ts) on this host's cgroup v2 hierarchy: the
 * run's cgroup is consulted first (its members, the status its shell recorded), and without a cgroup the recorded
 * pid counts only with its recorded start time, so a live process the kernel gave that pid is never the agent.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adoptedAgentState, type AdoptedAgent } from '../processes/adopted-agent';
import {
  cgroupMembers,
  createWorkCgroup,
  detectContainment,
  killCgroup,
  removeCgroup,
  supervisedStart,
} from '../processes/cgroups';
import { isAlive, processStartTime } from '../processes/process-table';
import { eventually } from '../testing/harness';

let dir: string;
const cgroups: string[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'treewarden-adopted-agent-'));
});
afterAll(async () => {
  for (const cgroup of cgroups) killCgroup(cgroup);
  await eventually('the test cgroups are empty', async () => cgroups.every((c) => cgroupMembers(c).length === 0));
  for (const cgroup of cgroups) removeCgroup(cgroup);
  rmSync(dir, { recursive: true, force: true });
});

/** A cgroup of this host for one agent, as a run gets one. */
function runCgroup(): string {
  const containment = detectContainment('auto');
  expect(containment.kind).toBe('cgroup2');
  const cgroup = createWorkCgroup(containment, randomUUID())!;
  cgroups.push(cgroup);
  return cgroup;
}

/** Starts `script` behind a start shell, as a run's agent starts, and returns it as the run records it. */
function startAgent(script: string, cgroupPath: string | null): AdoptedAgent {
  const exitFile = join(dir, `exit-status-${randomUUID()}`);
  const start = supervisedStart('sh', ['-c', script], { cgroupPath, exitFile });
  const shell = spawn(start.command, start.args, { detached: true, stdio: 'ignore' });
  shell.unref();
  const startTime = processStartTime(shell.pid!);
  expect(startTime).not.toBeNull();
  return { pid: shell.pid!, startTime: startTime!, cgroupPath, exitFile };
}

/** A file the agent writes once it runs: the start shell has then entered its cgroup. */
async function started(marker: string): Promise<number> {
  return eventually('the agent runs', async () =>
    existsSync(marker) ? Number(readFileSync(marker, 'utf8').trim()) || null : null,
  );
}

const marker = () => join(dir, `pid-${randomUUID()}`);

describe('without a cgroup: the recorded pid and start time', () => {
  test('a live process with the recorded pid but another start time is not the agent; the real one is', async () => {
    const agent = startAgent(`echo $$ > ${marker()}; exec sleep 600`, null);
    expect(adoptedAgentState(agent)).toEqual({ kind: 'running' });

    // the kernel reused the pid: the same pid lives, started at another time
    const reused = { ...agent, startTime: String(Number(agent.startTime) + 1) };
    expect(isAlive(reused.pid)).toBe(true);
    expect(adoptedAgentState(reused)).toEqual({ kind: 'vanished' });
    writeFileSync(agent.exitFile, '3\n');
    expect(adoptedAgentState(reused)).toEqual({ kind: 'exited', exitCode: 3 });
    expect(adoptedAgentState(agent)).toEqual({ kind: 'running' });
    process.kill(-agent.pid, 'SIGKILL');
  });

  test('an agent that exits is over with the status its start shell recorded', async () => {
    // it exits once its start time is read: one that exits at once may be gone (and reaped) before, under load
    const go = join(dir, `go-${randomUUID()}`);
    const agent = startAgent(`while [ ! -e ${go} ]; do sleep 0.02; done; exit 7`, null);
    writeFileSync(go, '');
    await eventually('the agent exited', async () => adoptedAgentState(agent).kind !== 'running');
    expect(adoptedAgentState(agent)).toEqual({ kind: 'exited', exitCode: 7 });
  });
});

describe("with a cgroup: the run's cgroup first", () => {
  test('an agent whose start shell was killed still runs while its processes live in its cgroup', async () => {
    const cgroup = runCgroup();
    const pidFile = marker();
    const agent = startAgent(`echo $$ > ${pidFile}; exec sleep 600`, cgroup);
    const agentProcess = await started(pidFile);
    process.kill(agent.pid, 'SIGKILL');
    await eventually('the start shell is gone', async () => !isAlive(agent.pid));

    // the recorded pid is gone and recorded no status, yet the agent's process runs on in the run's cgroup
    expect(cgroupMembers(cgroup)).toEqual([agentProcess]);
    expect(adoptedAgentState(agent)).toEqual({ kind: 'running' });
    // by pid alone it would have been given up for vanished while it still ran
    expect(adoptedAgentState({ ...agent, cgroupPath: null })).toEqual({ kind: 'vanished' });

    killCgroup(cgroup);
    await eventually('the cgroup is empty', async () => cgroupMembers(cgroup).length === 0);
    expect(adoptedAgentState(agent)).toEqual({ kind: 'vanished' });
  });

  test('an agent that exited is over with its recorded status, though what it left behind is in its cgroup', async () => {
    const cgroup = runCgroup();
    const pidFile = marker();
    const agent = startAgent(`setsid sleep 600 & echo $! > ${pidFile}; exit 4`, cgroup);
    const leftover = await started(pidFile);
    await eventually('the start shell is gone', async () => !isAlive(agent.pid));

    expect(cgroupMembers(cgroup)).toEqual([leftover]);
    expect(adoptedAgentState(agent)).toEqual({ kind: 'exited', exitCode: 4 });
  });

  test('a status written while the start shell still runs in the cgroup is not the end of the agent', async () => {
    const cgroup = runCgroup();
    const pidFile = marker();
    const agent = startAgent(`echo $$ > ${pidFile}; exec sleep 600`, cgroup);
    await started(pidFile);
    // the agent can write its run folder; its shell, still in the cgroup, has recorded nothing
    writeFileSync(agent.exitFile, '0');
    expect(adoptedAgentState(agent)).toEqual({ kind: 'running' });
  });
});
