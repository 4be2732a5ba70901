/**
 * @module Agent runs outlive their worker (issue 25): on two simulated hosts, with real worker processes restarted as
 * a process manager restarts them (SIGTERM, a rolling deploy) and killed (SIGKILL), every agent runs on, once, to
 * its own exit: the host's next worker adopts it. A stop requested while a run waits for adoption is verified by the
 * host's returning worker, never reported clean before. (Past the adoption window the stop is pending and the host
 * may be declared lost, as test/fleet.test.ts shows with a short window.)
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workflowId } from '../domain/ids';
import { runFiles } from '../runs/run-files';
import { eventually, runRow, seedCompany, startHarness, type Harness } from '../testing/harness';
import { workerRunning } from '../testing/worker-fleet';
import {
  processesOwnedBy,
  requireNamespaces,
  simulatedHost,
  type HostWorker,
  type SimulatedHost,
} from '../testing/simulated-hosts';

requireNamespaces();

let h: Harness;
let hosts: SimulatedHost[];
let dir: string;
beforeAll(async () => {
  // a long window (a worker restart inside a loaded host takes seconds), a short drain: every gated agent outlives it
  h = await startHarness(
    {
      TREEWARDEN_HEARTBEAT_TIMEOUT_MS: '5000',
      TREEWARDEN_STOP_GRACE_MS: '1000',
      TREEWARDEN_SHUTDOWN_GRACE_MS: '1500',
      TREEWARDEN_ADOPTION_WINDOW_MS: '180000',
      TREEWARDEN_ORPHAN_SWEEP_MS: '600000',
    },
    { inProcessWorker: false },
  );
  hosts = await Promise.all([simulatedHost('adopt-a'), simulatedHost('adopt-b')]);
  dir = mkdtempSync(join(tmpdir(), 'treewarden-adoption-'));
});
/** Every worker a test starts, so that one failing test leaves no worker to take the next one's runs. */
const started = new Map<HostWorker, SimulatedHost>();
async function startWorker(host: SimulatedHost, env: Record<string, string> = {}): Promise<HostWorker> {
  const worker = await host.startWorker({ ...h.env, ...env });
  started.set(worker, host);
  void worker.exited.then(() => started.delete(worker));
  return worker;
}
afterEach(async () => {
  await Promise.all([...started].map(([worker, host]) => host.killWorker(worker)));
});
afterAll(async () => {
  await Promise.all((hosts ?? []).map((host) => host.close()));
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const SETTLE_MS = 120_000;
jest.setTimeout(6 * 60_000);

type Company = Awaited<ReturnType<typeof seedCompany>>;

/**
 * An agent that says it started, waits for its gate file, says it finished and exits with `exitCode`: it cannot end
 * before the test opens the gate, so nothing depends on timing. `detachedChild`: it also starts a child in a session
 * of its own that waits for the same gate. `beforeExit`: shell it runs once the gate opens, before it says finished.
 */
async function gatedRun(c: Company, exitCode: number, { detachedChild = false, beforeExit = '' } = {}) {
  const gate = join(dir, `gate-${randomBytes(6).toString('hex')}`);
  const child = detachedChild ? 'setsid sh -c \'while [ ! -e "$1" ]; do sleep 0.2; done\' sh "$1" & ' : '';
  const wait = 'while [ ! -e "$1" ]; do sleep 0.2; done';
  const script = `${child}echo started; ${wait}; ${beforeExit}echo finished; exit ${exitCode}`;
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', script, 'sh', gate] });
  const issue = await c.issue({ title: `gated, exits ${exitCode}`, assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  const runId = wake.body.runId as string;
  const running = await eventually(
    `run ${runId} is running`,
    async () => {
      const row = await runRow(h, runId);
      const output = row.ownerToken ? readOutput(runId) : '';
      return row.status === 'running' && output.includes('started') ? row : null;
    },
    SETTLE_MS,
  );
  return {
    runId,
    exitCode,
    hostId: running.hostId!,
    ownerToken: running.ownerToken!,
    openGate: () => writeFileSync(gate, ''),
  };
}

const readOutput = (runId: string) => {
  const file = runFiles(runId, null).output;
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};

async function activityTypes(runId: string, event: 'scheduled' | 'started') {
  const events = (await h.services.client.workflow.getHandle(workflowId.agentRun(runId)).fetchHistory()).events ?? [];
  const typeOf = new Map<string, string>();
  for (const e of events)
    if (e.activityTaskScheduledEventAttributes)
      typeOf.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
  return events.flatMap((e) => {
    if (event === 'scheduled') return e.activityTaskScheduledEventAttributes ? [typeOf.get(String(e.eventId))!] : [];
    const started = e.activityTaskStartedEventAttributes;
    return started ? [typeOf.get(String(started.scheduledEventId))!] : [];
  });
}

/** Pending: an activity's start is written to the history only when it ends, so the pending one is asked. */
const adoptedBy = (runId: string, worker: HostWorker) =>
  eventually(
    `run ${runId} adopted by worker ${worker.identity}`,
    async () => (await workerRunning(h.services.client, workflowId.agentRun(runId), 'adoptRun')) === worker.identity,
  );

const settledRun = (runId: string) =>
  eventually(
    `run ${runId} settled`,
    async () => {
      const row = await runRow(h, runId);
      return ['succeeded', 'failed', 'cancelled'].includes(row.status) ? row : null;
    },
    SETTLE_MS,
  );

describe('a rolling restart of every worker on two hosts', () => {
  test('ten running agents (one with a setsid child) are never stopped nor re-run, and each ends with its own exit code and complete output', async () => {
    const c = await seedCompany(h, 'Rolling restart');
    // five agent slots per worker for ten runs: once one host's five are taken the rest must run on the other
    // (matching alone may hand every run to the poller that just took one)
    const halfTheAgents = { TREEWARDEN_WORKER_MAX_AGENT_RUNS: '5' };
    const workers = new Map<SimulatedHost, HostWorker>();
    for (const host of hosts) workers.set(host, await startWorker(host, halfTheAgents));
    const runs: Awaited<ReturnType<typeof gatedRun>>[] = [];
    for (let i = 0; i < 10; i++) runs.push(await gatedRun(c, i % 3, { detachedChild: i === 4 }));
    const runsPerHost = new Map<string, number>();
    for (const run of runs) runsPerHost.set(run.hostId, (runsPerHost.get(run.hostId) ?? 0) + 1);
    expect(runsPerHost).toEqual(new Map(hosts.map((host) => [workers.get(host)!.hostId, 5])));

    // the first three may end while their worker drains; every other one outlives the drain
    for (const [index, host] of hosts.entries()) {
      const draining = workers.get(host)!;
      const exited = host.stopWorker(draining);
      if (index === 0) for (const run of runs.slice(0, 3)) run.openGate();
      expect(await exited).toBe(0);
      workers.set(host, await startWorker(host, halfTheAgents));
    }
    for (const run of runs.slice(3)) {
      const row = await runRow(h, run.runId);
      expect(row).toMatchObject({ status: 'running', stopRequestedAt: null, stopResult: null });
      expect(processesOwnedBy(run.ownerToken).length).toBeGreaterThanOrEqual(2);
    }
    for (const run of runs.slice(3)) run.openGate();

    for (const run of runs) {
      const row = await settledRun(run.runId);
      expect(row).toMatchObject({
        status: run.exitCode === 0 ? 'succeeded' : 'failed',
        exitCode: run.exitCode,
        hostId: run.hostId,
        stopRequestedAt: null,
        stopResult: null,
      });
      expect(readOutput(run.runId).split('\n').filter(Boolean)).toEqual(['started', 'finished']);
      const scheduled = await activityTypes(run.runId, 'scheduled');
      expect(scheduled.filter((t) => t === 'executeRun')).toHaveLength(1);
      expect(scheduled).not.toContain('stopProcessGroup');
    }
    // every agent that outlived its worker's drain was adopted on its own host
    for (const run of runs.slice(3)) expect(await activityTypes(run.runId, 'started')).toContain('adoptRun');
    await eventually('nothing of any run is left', async () =>
      runs.every((run) => processesOwnedBy(run.ownerToken).length === 0),
    );
    await Promise.all(hosts.map((host) => host.stopWorker(workers.get(host)!)));
  });
});

describe('a worker killed with SIGKILL', () => {
  test("its agent is never reported stopped while it lives; the host's next worker adopts it and it succeeds once", async () => {
    const [host, other] = hosts;
    const c = await seedCompany(h, 'Killed worker');
    // the run starts where the only worker is; the other host's worker then runs the workflow's tasks meanwhile
    let worker = await startWorker(host);
    const run = await gatedRun(c, 0);
    const bystander = await startWorker(other);
    await host.killWorker(worker);
    // past the heartbeat timeout nobody supervises it, and nothing calls it stopped or failed
    await eventually('the workflow waits for an adopter', async () =>
      (await activityTypes(run.runId, 'scheduled')).includes('adoptRun'),
    );
    expect(await runRow(h, run.runId)).toMatchObject({ status: 'running', stopResult: null });
    expect(processesOwnedBy(run.ownerToken).length).toBeGreaterThanOrEqual(2);

    worker = await startWorker(host);
    await adoptedBy(run.runId, worker);
    run.openGate();
    expect(await settledRun(run.runId)).toMatchObject({ status: 'succeeded', exitCode: 0, stopResult: null });
    const terminal = await h.services.db.activityLog.findMany({
      where: { entityId: run.runId, action: { in: ['run.succeeded', 'run.failed', 'run.cancelled'] } },
    });
    expect(terminal.map((e) => e.action)).toEqual(['run.succeeded']);
    await Promise.all([host.stopWorker(worker), other.stopWorker(bystander)]);
  });

  test('an agent that records a success for itself before it fails is adopted and settles with its real exit', async () => {
    const [host] = hosts;
    const c = await seedCompany(h, 'Forged exit status');
    // where its start shell records the status, and where it did before the sandbox: both are the supervisor's
    const forge = ['.supervisor/exit-status', 'exit-status']
      .map((file) => `echo 0 > "$(dirname "$TREEWARDEN_JOURNAL_FILE")/${file}" && echo "forged ${file}"; `)
      .join('');
    let worker = await startWorker(host);
    const run = await gatedRun(c, 3, { beforeExit: forge });
    await host.killWorker(worker);
    worker = await startWorker(host);
    await adoptedBy(run.runId, worker);
    run.openGate();
    expect(await settledRun(run.runId)).toMatchObject({ status: 'failed', exitCode: 3 });
    expect(readOutput(run.runId)).not.toContain('forged .supervisor/exit-status');
    expect(readFileSync(runFiles(run.runId, null).exitStatus, 'utf8').trim()).toBe('3');
    await host.stopWorker(worker);
  });

  test('a stop requested while the run waits for adoption is verified once the host is back, never clean before', async () => {
    const [other, host] = hosts;
    const c = await seedCompany(h, 'Stopped while unadopted');
    let worker = await startWorker(host);
    const run = await gatedRun(c, 0);
    const bystander = await startWorker(other);
    await host.killWorker(worker);
    const stop = await h.request('POST', `/api/work/${run.runId}/stop`, c.token);
    expect([200, 202]).toContain(stop.status);
    expect(stop.body.stop.verdict).not.toBe('terminal-clean');
    // the host has no worker: the agent lives, and its stop is not clean
    await eventually('the stop waits for the host', async () =>
      (await activityTypes(run.runId, 'scheduled')).includes('stopProcessGroup'),
    );
    expect(processesOwnedBy(run.ownerToken).length).toBeGreaterThanOrEqual(2);
    expect((await runRow(h, run.runId)).stopResult).toBeNull();

    worker = await startWorker(host);
    const row = await settledRun(run.runId);
    expect(row).toMatchObject({ status: 'cancelled', hostId: run.hostId, stopResult: { verdict: 'terminal-clean' } });
    expect(processesOwnedBy(run.ownerToken)).toEqual([]);
    expect(readOutput(run.runId)).not.toContain('finished');
    await Promise.all([host.stopWorker(worker), other.stopWorker(bystander)]);
  });
});
