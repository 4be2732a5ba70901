/**
 * @module Worker processes killed with SIGKILL in the middle of their work lose nothing: a watchdog evaluation still
 * gives exactly one wake, a restarted worker brings back every active watchdog's workflow, and a run whose worker died
 * is adopted by the next worker of its host and ends once, with its agent's own exit code, and so are a run's monitor
 * and shell job, across a rolling restart and then a crash. (Kills in a release's
 * fan-out and a resolved blocker's resume: test/release-kills.test.ts.)
 */
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workflowId } from '../domain/ids';
import { isAlive, ownedProcesses } from '../processes/process-table';
import { runFiles } from '../runs/run-files';
import { subtreeChangedSignal } from '../workflows/definitions';
import { eventually, runRow, seedCompany, type Harness } from '../testing/harness';
import { workerRunning, type WorkerFleet } from '../testing/worker-fleet';
import { ACP_FIXTURE, journalOf } from '../testing/acp';
import { startKillFleet, trialsUntilLanded, type KillFleet } from './support/kill-trials';
import { seededRandom } from './support/seeded-random';

let kills: KillFleet;
let h: Harness;
let fleet: WorkerFleet;
beforeAll(async () => {
  kills = await startKillFleet();
  ({ h, fleet } = kills);
});
afterAll(async () => {
  await kills?.close();
});

test('a worker killed mid-evaluation still gives exactly one wake after recovery', async () => {
  const random = seededRandom(3);
  const landed = await trialsUntilLanded(2, 5, async (trial) => {
    const c = await seedCompany(h);
    const watcher = await c.agent();
    const root = await c.issue({ title: `watched ${trial}` });
    // a wide stopped subtree, so the evaluation takes long enough to be interrupted
    await h.services.db.issue.createMany({
      data: Array.from({ length: 2000 }, (_, i) => ({
        companyId: c.companyId,
        parentId: root.id,
        title: `leaf ${i}`,
        status: 'done' as const,
      })),
    });
    const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
    expect(put.status).toBe(201);
    const wakes = () =>
      h.services.db.wakeRequest.count({ where: { idempotencyKey: { startsWith: `task_watchdog:${put.body.id}:` } } });
    let woke = false;
    // the killed task times out (10 s), the replacement workers start and evaluate 2,000 leaves: minutes on a
    // loaded 2-core machine
    const watching = eventually('the watchdog wake', async () => (woke = (await wakes()) > 0), 180_000);
    await kills.killDuringWorkflowTask(workflowId.taskWatchdog(root.id), Math.floor(random() * 100), () => woke);
    await watching;
    const landedMidTask = (await kills.timedOutTasks(workflowId.taskWatchdog(root.id))) > 0;
    // later evaluations of the same stop (the retry, a recovery signal) add nothing
    const evaluatedAt = async () =>
      (
        (await h.services.db.watchdog.findUniqueOrThrow({ where: { id: put.body.id } })).lastEvaluation as {
          evaluatedAt?: string;
        } | null
      )?.evaluatedAt ?? '';
    const first = await evaluatedAt();
    // a comment records no change (test/change-outbox.test.ts): a direct change signal evaluates the same stop again
    await h.services.client.workflow
      .getHandle(workflowId.taskWatchdog(root.id))
      .signal(subtreeChangedSignal, { watchdogId: put.body.id, reason: 'nudge' });
    await eventually('a later evaluation', async () => (await evaluatedAt()) > first, 60_000);
    expect(await wakes()).toBe(1);
    await kills.fleetRestored();
    return landedMidTask;
  });
  expect(landed).toBe(2);
}, 900_000);

test('a worker that starts brings back the workflow of every active watchdog', async () => {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const root = await c.issue({ title: 'watched while the fleet is down' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  expect(put.status).toBe(201);
  const handle = h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id));
  await eventually('watchdog workflow running', async () => (await handle.describe()).status.name === 'RUNNING');
  await handle.terminate('simulating a workflow lost with its cluster');
  expect((await handle.describe()).status.name).toBe('TERMINATED');

  await fleet.start();
  await eventually(
    'the watchdog workflow is running again',
    async () =>
      (await h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id)).describe()).status.name ===
      'RUNNING',
  );
});

test("a run whose worker dies is adopted by its host's next worker: it runs on, once, and ends with its own exit code", async () => {
  const gate = join(mkdtempSync(join(tmpdir(), 'treewarden-adopt-')), 'gate');
  const c = await seedCompany(h);
  const script = 'echo started; while [ ! -e "$1" ]; do sleep 0.1; done; echo finished; exit 7';
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', script, 'sh', gate] });
  const issue = await c.issue({ title: 'its worker crashes', assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  const runId: string = wake.body.runId;
  const row = () => h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
  const owned = async () => {
    const run = await row();
    return ownedProcesses({
      ownerToken: run.ownerToken,
      processGroupId: run.processGroupId,
      cgroupPath: run.cgroupPath,
    });
  };
  // the agent and its start shell, which records the exit status no adopter could learn otherwise
  await eventually('the run is running', async () => (await owned()).length >= 2);
  const identity = await eventually('the worker running the run', () =>
    workerRunning(h.services.client, workflowId.agentRun(runId), 'executeRun'),
  );
  const started = await row();
  await fleet.kill(fleet.workers.find((w) => w.identity === identity)!);
  kills.replace();
  const adopter = await eventually(
    'a worker of the host adopted the run',
    () => workerRunning(h.services.client, workflowId.agentRun(runId), 'adoptRun'),
    60_000,
  );
  expect(adopter).not.toBe(identity);
  // the same agent, never stopped, under the same token: the run simply goes on
  expect(isAlive(started.processGroupId!)).toBe(true);
  expect(await row()).toMatchObject({
    status: 'running',
    processGroupId: started.processGroupId,
    ownerToken: started.ownerToken,
    stopRequestedAt: null,
    stopResult: null,
  });
  writeFileSync(gate, '');
  const settled = await eventually('the run settled', async () => {
    const run = await row();
    return run.status !== 'running' ? run : null;
  });
  expect(settled).toMatchObject({ status: 'failed', exitCode: 7 });
  const output = readFileSync(runFiles(runId, settled.workdir).output, 'utf8');
  expect(output.split('\n').filter(Boolean)).toEqual(['started', 'finished']);
  const history = (await h.services.client.workflow.getHandle(workflowId.agentRun(runId)).fetchHistory()).events ?? [];
  const scheduled = history.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  expect(scheduled.filter((t) => t === 'executeRun')).toHaveLength(1);
  expect(scheduled.filter((t) => t === 'adoptRun')).toHaveLength(1);
  expect(await owned()).toEqual([]);
});

test("a run's monitor and shell job outlive a rolling restart and a crash of their workers: adopted, the same processes", async () => {
  const gate = join(mkdtempSync(join(tmpdir(), 'treewarden-jobs-')), 'gate');
  const c = await seedCompany(h);
  // each waits for the gate, then exits with the code it is given
  const waitsForGate = (exitCode: number) => [
    '-c',
    'while [ ! -e "$1" ]; do sleep 0.1; done; exit "$2"',
    'sh',
    gate,
    String(exitCode),
  ];
  const agent = await c.agent({ type: 'process', command: 'sh', args: waitsForGate(0) });
  const issue = await c.issue({ title: 'owns a monitor and a job', assigneeAgentId: agent.id });
  const runId: string = (await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {})).body.runId;
  await eventually('the agent running', async () => (await runRow(h, runId)).processGroupId);
  const startJob = async (kind: 'monitor' | 'shell_job', exitCode: number) => {
    const started = await h.request('POST', `/api/runs/${runId}/jobs`, c.token, {
      kind,
      command: 'sh',
      args: waitsForGate(exitCode),
    });
    expect(started.status).toBe(201);
    return started.body.id as string;
  };
  const [monitorId, jobId] = [await startJob('monitor', 0), await startJob('shell_job', 3)];
  const jobs = () =>
    h.services.db.job.findMany({ where: { id: { in: [monitorId, jobId] } }, orderBy: { kind: 'asc' } });
  const started = await eventually('both commands started', async () => {
    const rows = await jobs();
    return rows.every((j) => j.processGroupId !== null) ? rows : null;
  });

  // a rolling restart: each worker in turn gets SIGTERM once a replacement is up; then a crash of every worker
  for (const worker of [...fleet.workers]) {
    await fleet.start();
    await fleet.stop(worker);
  }
  // taken over at least once each (twice when the worker that adopted one was the next to restart)
  const restarted = await eventually('both adopted after the restart', async () => {
    const rows = await jobs();
    return rows.every((j) => j.adoptions >= 1) ? rows : null;
  });
  for (const worker of [...fleet.workers]) {
    kills.replace();
    await fleet.kill(worker);
  }
  // every worker died, the adopters among them: each is taken over again
  const adopted = await eventually('both adopted again after the crash', async () => {
    const rows = await jobs();
    return rows.every((j, i) => j.adoptions > restarted[i].adoptions) ? rows : null;
  });
  // the same processes all along, still running, under their run
  expect(adopted.map((j) => [j.status, j.processGroupId, j.ownerRunId])).toEqual(
    started.map((j) => ['running', j.processGroupId, runId]),
  );
  for (const j of adopted) expect(isAlive(j.processGroupId!)).toBe(true);

  writeFileSync(gate, '');
  const job = await eventually('the job settled', async () => {
    const row = await h.services.db.job.findUniqueOrThrow({ where: { id: jobId } });
    return row.status !== 'running' ? row : null;
  });
  // its own exit code, recorded by its start shell while no worker watched, read by its second adopter
  expect(job).toMatchObject({ status: 'exited', exitCode: 3 });
  await eventually('the run settled', async () => (await runRow(h, runId)).status === 'succeeded');
  await eventually('the monitor ended with its run', async () =>
    (await jobs()).every((j) => j.status !== 'running' && !isAlive(j.processGroupId!)),
  );
});

test.each([
  ['SIGKILL', 'a crash'],
  ['SIGTERM', "a deploy's drain"],
] as const)(
  'an acp run whose worker ends mid-turn (%s, %s) is adopted: the session kept, the turn ends once',
  async (signal, _how) => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'treewarden-acp-adopt-')));
    const c = await seedCompany(h);
    const agent = await c.agent({
      type: 'acp',
      ...ACP_FIXTURE,
      env: { ACP_FIXTURE_MODE: 'wait-go' },
      cwd: workspace,
    });
    const issue = await c.issue({ title: 'its worker crashes mid-turn', assigneeAgentId: agent.id });
    const runId: string = (await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {})).body.runId;
    const journal = () => journalOf(runId, workspace);
    await eventually('the turn under way', async () => journal().some((l) => l.text === 'waiting for go'));
    const identity = await eventually('the worker running the run', () =>
      workerRunning(h.services.client, workflowId.agentRun(runId), 'executeRun'),
    );
    const worker = fleet.workers.find((w) => w.identity === identity)!;
    if (signal === 'SIGKILL') await fleet.kill(worker);
    else expect(await fleet.stop(worker, 'SIGTERM')).toBe(0); // it lets go of the agent and drains
    kills.replace();
    await eventually(
      'a worker of the host adopted the run',
      () => workerRunning(h.services.client, workflowId.agentRun(runId), 'adoptRun'),
      60_000,
    );
    writeFileSync(join(workspace, '.acp-fixture-go'), '');
    const settled = await eventually('the run settled', async () => {
      const run = await runRow(h, runId);
      return run.status !== 'running' ? run : null;
    });
    expect(settled).toMatchObject({ status: 'succeeded', exitCode: 0 });
    const kinds = journal().map((l) => l.kind);
    expect(kinds.filter((k) => k === 'session')).toHaveLength(1);
    expect(journal().filter((l) => l.kind === 'turn_end')).toEqual([
      expect.objectContaining({ stopReason: 'end_turn' }),
    ]);
    const history =
      (await h.services.client.workflow.getHandle(workflowId.agentRun(runId)).fetchHistory()).events ?? [];
    const scheduled = history.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(scheduled.filter((t) => t === 'executeRun')).toHaveLength(1);
    expect(scheduled.filter((t) => t === 'adoptRun')).toHaveLength(1);
  },
);
