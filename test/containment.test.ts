/**
 * @module Containment by cgroup (issue 25, item 2): on this host (a writable cgroup v2 hierarchy) each run gets a
 * cgroup of its own, so a descendant that clears its environment and leaves the process group (`env -i setsid`)
 * is still the run's: listed by inspect while it lives, stopped with its run, and the stop is clean only once the
 * cgroup is empty. Where no cgroup can be made, containment falls back to process groups and owner tokens.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cgroupMembers, detectContainment } from '../processes/cgroups';
import { isAlive } from '../processes/process-table';
import { hostPidOf } from './support/ns-pid';
import { eventually, runRow, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_SUPERVISE_EVERY_MS: '200', TREEWARDEN_STOP_GRACE_MS: '1000' });
});
afterAll(async () => {
  await h?.close();
});

/** A run whose agent starts an escapee (no environment, its own session), then waits; the escapee's pid file. */
async function runWithEscapee() {
  const c = await seedCompany(h);
  const pidFile = `/tmp/tw-escapee-${Date.now()}-${Math.random().toString(16).slice(2)}`;
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: ['-c', `env -i setsid sh -c 'echo $$ > ${pidFile}; exec sleep 600' </dev/null >/dev/null 2>&1 & sleep 600`],
  });
  const issue = await c.issue({ title: 'contained', assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  const runId = wake.body.runId as string;
  // the agent sees its sandbox's PID namespace: the pid it wrote is translated among the run's cgroup members
  const escapee = await eventually('the escapee started', async () => {
    const cgroupPath = (await runRow(h, runId)).cgroupPath;
    const nsPid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : 0;
    return cgroupPath && nsPid ? hostPidOf(nsPid, cgroupMembers(cgroupPath)) : null;
  });
  return { c, runId, escapee };
}

test('this host contains runs by cgroup v2, and says so', () => {
  expect(h.services.containment.kind).toBe('cgroup2');
});

test('an env -i setsid escapee is listed by inspect while it lives and stopped with its run', async () => {
  const { c, runId, escapee } = await runWithEscapee();
  const row = await eventually('the run is running in its cgroup', async () => {
    const r = await runRow(h, runId);
    return r.status === 'running' && r.cgroupPath ? r : null;
  });
  const cgroup = row.cgroupPath!;
  expect(cgroup).toBe(join((h.services.containment as { root: string }).root, runId));
  expect(cgroupMembers(cgroup)).toContain(escapee);
  // neither the token nor the group finds it: its environment is empty and its session its own
  expect(readFileSync(`/proc/${escapee}/environ`, 'utf8')).not.toContain('TREEWARDEN_OWNER_TOKEN');
  expect(readFileSync(`/proc/${escapee}/stat`, 'utf8').split(') ')[1].split(' ')[2]).toBe(String(escapee));
  const inspected = await h.request('GET', `/api/work/${runId}/inspect`, c.token);
  expect(inspected.status).toBe(200);
  const pids = inspected.body.processTree.processes.map((p: { pid: number }) => p.pid);
  expect(pids).toContain(escapee);

  const stop = await h.request('POST', `/api/work/${runId}/stop`, c.token);
  expect(stop.status).toBe(200);
  expect(stop.body.stop).toMatchObject({ verdict: 'terminal-clean' });
  expect(isAlive(escapee)).toBe(false);
  expect((await settled(h, runId)).status).toBe('cancelled');
  // an empty cgroup is removed with the clean stop
  expect(existsSync(cgroup)).toBe(false);
});

test('a run whose agent exits leaves no cgroup behind', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent({ type: 'process', command: 'true', args: [] });
  const issue = await c.issue({ title: 'short', assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  const run = await settled(h, wake.body.runId);
  expect(run.status).toBe('succeeded');
  expect(run.cgroupPath).not.toBeNull();
  expect(existsSync(run.cgroupPath!)).toBe(false);
});

test('containment by process group when asked (or when no cgroup hierarchy is writable)', () => {
  expect(detectContainment('process-group')).toEqual({
    kind: 'process-group',
    reason: 'TREEWARDEN_CONTAINMENT=process-group',
  });
});
