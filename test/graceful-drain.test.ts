/**
 * @module Graceful shutdown drains in-flight work within a grace period (issue 6), with real worker
 * processes (workers/main.ts) and real agent runs: on SIGTERM a worker stops taking work (/healthz
 * 503) and lets its running activity finish before it exits 0. An agent that outlives the grace
 * period is let go of at the deadline and adopted by the host's next worker (issue 25): it runs on,
 * once, to its own exit. A prepare step that outlives it is stopped (killed, if it ignores SIGTERM),
 * and its run settles exactly once on another worker without the command running a second time.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workflowId } from '../domain/ids';
import { isAlive, ownedProcesses } from '../processes/process-table';
import { eventually, runRow, seedCompany, startHarness, type Harness } from '../testing/harness';
import { workerFleet, workerRunning, type WorkerFleet, type WorkerProcess } from '../testing/worker-fleet';

let h: Harness;
let fleet: WorkerFleet;
let dir: string;
beforeAll(async () => {
  h = await startHarness({}, { inProcessWorker: false });
  fleet = workerFleet(h);
  dir = mkdtempSync(join(tmpdir(), 'treewarden-drain-'));
});
// each test starts its own workers; whatever one leaves behind must not take the next one's work
afterEach(async () => {
  await Promise.all(fleet.workers.map((w) => fleet.kill(w)));
});
afterAll(async () => {
  await fleet?.close();
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * An agent run whose command appends `started` to its log, waits until the gate file exists and
 * appends `finished`: it cannot finish before the test opens the gate, so nothing depends on timing.
 * With `ignoreSigterm` the command (and every process it starts) ignores SIGTERM.
 */
async function gatedRun(name: string, { ignoreSigterm = false, inPrepare = false } = {}) {
  const log = join(dir, `${name}.log`);
  const gate = join(dir, `${name}.gate`);
  const c = await seedCompany(h);
  const script = `${ignoreSigterm ? 'trap "" TERM; ' : ''}echo started >> "$1"; while [ ! -e "$2" ]; do sleep 0.1; done; echo finished >> "$1"`;
  const gated = { command: 'sh', args: ['-c', script, 'sh', log, gate] };
  const agent = await c.agent({ type: 'process', ...(inPrepare ? { command: 'true', prepare: gated } : gated) });
  const issue = await c.issue({ title: `drained: ${name}`, assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  const runId: string = wake.body.runId;
  return {
    runId,
    handle: h.services.client.workflow.getHandle(workflowId.agentRun(runId)),
    lines: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
    openGate: () => writeFileSync(gate, ''),
  };
}

/** Waits until the run's command is running under `worker`'s executeRun. */
async function runningOn(run: Awaited<ReturnType<typeof gatedRun>>, worker: WorkerProcess) {
  const identity = await eventually('executeRun started', () =>
    workerRunning(h.services.client, workflowId.agentRun(run.runId), 'executeRun'),
  );
  expect(identity).toBe(worker.identity);
  await eventually('the command started', async () => run.lines().includes('started'));
}

/** The run workflow's activity attempts as its history records them: who started, completed or failed each. */
async function activityAttempts(run: Awaited<ReturnType<typeof gatedRun>>) {
  const events = (await run.handle.fetchHistory()).events ?? [];
  const scheduled = new Map<string, string>(); // scheduled event id → activity type
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes)
      scheduled.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
  }
  const typeOf = (scheduledEventId: unknown) => scheduled.get(String(scheduledEventId)) ?? '';
  return {
    scheduled: (type: string) => [...scheduled.values()].filter((t) => t === type).length,
    started: events.flatMap((e) =>
      e.activityTaskStartedEventAttributes
        ? [
            {
              type: typeOf(e.activityTaskStartedEventAttributes.scheduledEventId),
              ...e.activityTaskStartedEventAttributes,
            },
          ]
        : [],
    ),
    completed: events.flatMap((e) =>
      e.activityTaskCompletedEventAttributes
        ? [
            {
              type: typeOf(e.activityTaskCompletedEventAttributes.scheduledEventId),
              ...e.activityTaskCompletedEventAttributes,
            },
          ]
        : [],
    ),
    failed: events.flatMap((e) =>
      e.activityTaskFailedEventAttributes
        ? [
            {
              type: typeOf(e.activityTaskFailedEventAttributes.scheduledEventId),
              ...e.activityTaskFailedEventAttributes,
            },
          ]
        : [],
    ),
  };
}

const healthz = async (worker: WorkerProcess) => {
  const response = await fetch(worker.healthz);
  return { status: response.status, body: (await response.json()) as { state: string } };
};

test('SIGTERM mid-activity drains: the in-flight activity finishes on the draining worker and the process exits 0', async () => {
  // a grace far longer than the test: only the gate decides when the activity finishes
  const draining = await fleet.start({ TREEWARDEN_SHUTDOWN_GRACE_MS: '600000' });
  const run = await gatedRun('drains');
  await runningOn(run, draining);
  expect(await healthz(draining)).toEqual({
    status: 200,
    body: { state: 'RUNNING', containment: 'cgroup2', sandbox: { kind: 'namespaces' } },
  });

  const exitCode = fleet.stop(draining);
  // draining: it takes no new work and says so, while its activity (held by the gate) goes on
  const drainingHealth = await eventually('/healthz 503 while draining', async () => {
    const health = await healthz(draining);
    return health.status === 503 ? health : null;
  });
  expect(['DRAINING', 'DRAINED']).toContain(drainingHealth.body.state);
  expect(fleet.workers.map((w) => w.pid)).toContain(draining.pid); // still alive, waiting for its activity
  expect((await runRow(h, run.runId)).status).toBe('running');
  expect(run.lines()).toEqual(['started']);

  run.openGate();
  expect(await exitCode).toBe(0);
  expect(run.lines()).toEqual(['started', 'finished']); // ran to its end, not stopped

  // the draining worker completed the activity itself, on its first attempt
  const drained = await activityAttempts(run);
  expect(
    drained.started.filter((a) => a.type === 'executeRun').map((a) => ({ identity: a.identity, attempt: a.attempt })),
  ).toEqual([{ identity: draining.identity, attempt: 1 }]);
  expect(drained.completed.filter((a) => a.type === 'executeRun').map((a) => a.identity)).toEqual([draining.identity]);
  expect(drained.failed).toEqual([]);

  // a replacement settles the workflow with the activity's result; nothing ran twice
  const replacement = await fleet.start();
  expect(await run.handle.result()).toBe('succeeded');
  const settled = await runRow(h, run.runId);
  expect(settled).toMatchObject({ status: 'succeeded', exitCode: 0, error: null });
  expect(run.lines()).toEqual(['started', 'finished']);
  const history = await activityAttempts(run);
  expect(history.scheduled('executeRun')).toBe(1);
  expect(history.completed.filter((a) => a.type === 'finishRun').map((a) => a.identity)).toEqual([
    replacement.identity,
  ]);
  expect(ownedProcesses(settled)).toEqual([]);
});

test('an agent longer than the grace period is let go of at the deadline: the worker exits 0, the agent runs on, and the next worker adopts it to its own end', async () => {
  const draining = await fleet.start({ TREEWARDEN_SHUTDOWN_GRACE_MS: '1500' });
  const run = await gatedRun('outlives-grace');
  await runningOn(run, draining);
  expect(await fleet.stop(draining)).toBe(0);

  // let go of at the deadline, not stopped: the agent still runs with no worker at all
  const letGo = await activityAttempts(run);
  expect(
    letGo.failed
      .filter((a) => a.type === 'executeRun')
      .map((a) => ({ identity: a.identity, type: a.failure?.applicationFailureInfo?.type })),
  ).toEqual([{ identity: draining.identity, type: 'AgentLetGo' }]);
  const running = await runRow(h, run.runId);
  expect(running.status).toBe('running');
  expect(isAlive(running.processGroupId!)).toBe(true);

  const replacement = await fleet.start();
  await eventually('adopted by the replacement', async () =>
    (await workerRunning(h.services.client, workflowId.agentRun(run.runId), 'adoptRun')) === replacement.identity
      ? true
      : null,
  );
  expect(existsSync(join(dir, 'outlives-grace.gate'))).toBe(false); // still waiting: it was never stopped
  run.openGate();
  expect(await run.handle.result()).toBe('succeeded');
  expect(await runRow(h, run.runId)).toMatchObject({ status: 'succeeded', exitCode: 0, stopRequestedAt: null });
  expect(run.lines()).toEqual(['started', 'finished']); // one agent, from its start to its end
  const history = await activityAttempts(run);
  expect(history.scheduled('executeRun')).toBe(1);
  expect(history.scheduled('stopProcessGroup')).toBe(0);
  expect(history.completed.filter((a) => a.type === 'adoptRun').map((a) => a.identity)).toEqual([replacement.identity]);
});

// without the SIGKILL after the stop grace (activities/supervised-process.ts) this worker never exits
test('a prepare step that ignores SIGTERM cannot hold the drain open: killed after the stop grace, the worker exits 0 and the run settles once on another worker', async () => {
  const draining = await fleet.start({ TREEWARDEN_SHUTDOWN_GRACE_MS: '1500' });
  // the gate is never opened: the command outlives any grace
  const run = await gatedRun('ignores-sigterm', { ignoreSigterm: true, inPrepare: true });
  await runningOn(run, draining);
  const replacement = await fleet.start();

  expect(await fleet.stop(draining)).toBe(0);
  // cancelled at the deadline on the draining worker, which stopped the command before it exited:
  // its process (the group leader) is gone before any other worker could act on the failure
  const cancelled = await activityAttempts(run);
  expect(
    cancelled.started.filter((a) => a.type === 'executeRun').map((a) => ({ identity: a.identity, attempt: a.attempt })),
  ).toEqual([{ identity: draining.identity, attempt: 1 }]);
  expect(
    cancelled.failed
      .filter((a) => a.type === 'executeRun')
      .map((a) => ({ identity: a.identity, type: a.failure?.applicationFailureInfo?.type })),
  ).toEqual([{ identity: draining.identity, type: 'WorkerShutdown' }]);
  expect(isAlive((await runRow(h, run.runId)).processGroupId!)).toBe(false);

  // executeRun is never retried (an agent's command is not idempotent): another worker verifies
  // that nothing of it is left and settles the run once, as a worker failure with an unknown outcome
  expect(await run.handle.result()).toBe('failed');
  const settled = await runRow(h, run.runId);
  expect(settled).toMatchObject({ status: 'failed', failureState: 'uninspected' });
  // the recorded error says why, not only "Activity task failed"
  expect(settled.error).toMatch(/^Activity task failed: .*shut/i);
  expect((settled.stopResult as { verdict: string }).verdict).toBe('terminal-clean');
  expect(ownedProcesses(settled)).toEqual([]);
  const history = await activityAttempts(run);
  expect(history.scheduled('executeRun')).toBe(1);
  expect(history.completed.filter((a) => a.type === 'stopProcessGroup').map((a) => a.identity)).toEqual([
    replacement.identity,
  ]);
  expect(history.completed.filter((a) => a.type === 'finishRun').map((a) => a.identity)).toEqual([
    replacement.identity,
  ]);
  const terminal = await h.services.db.activityLog.findMany({
    where: { entityId: run.runId, action: { in: ['run.succeeded', 'run.failed', 'run.cancelled'] } },
  });
  expect(terminal.map((e) => e.action)).toEqual(['run.failed']);
  expect(run.lines()).toEqual(['started']); // ran once, and was stopped before its end
});
