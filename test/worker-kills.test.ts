/**
 * @module Worker processes killed with SIGKILL in the middle of an activity lose nothing: a watchdog
 * evaluation still gives exactly one wake, a release fan-out still gives every owed resume exactly
 * once, a restarted worker brings back every active watchdog's workflow, and a run whose worker
 * died is adopted by the next worker of its host and ends once, with its agent's own exit code.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { temporal } from '@temporalio/proto';
import { workflowId } from '../domain/ids';
import { isAlive, ownedProcesses } from '../processes/process-table';
import { runFiles } from '../runs/run-files';
import { subtreeChangedSignal } from '../workflows/definitions';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { expectResumedExactlyOnce, pausedFamily } from './support/paused-family';
import { seededRandom } from './support/seeded-random';
import { workerFleet, workerRunning, type WorkerFleet } from '../testing/worker-fleet';

let h: Harness;
let fleet: WorkerFleet;
beforeAll(async () => {
  // a dead worker's activity moves to a live one after 4 s instead of the production 10 s (shorter
  // risks timing out live activities on a loaded 2-core machine)
  h = await startHarness(
    // every worker start recovers (no fleet-wide lease): the recovery itself is what one test here checks
    {
      TREEWARDEN_HEARTBEAT_TIMEOUT_MS: '4000',
      TREEWARDEN_FIRST_RUN_GRACE_MS: '1',
      TREEWARDEN_FLEET_RECOVERY_EVERY_MS: '1',
    },
    { inProcessWorker: false },
  );
  fleet = workerFleet(h);
  await Promise.all([fleet.start(), fleet.start()]);
});
afterAll(async () => {
  await Promise.allSettled(replacements);
  await fleet?.close();
  await h?.close();
});

/**
 * Waits until `activityType` is running for the workflow, waits `delayMs` more, and kills the
 * worker process running it; a replacement starts at once. True when the kill landed while the
 * activity was still in flight.
 */
async function killMidActivity(
  id: string,
  activityType: string,
  delayMs: number,
  until: () => boolean,
): Promise<boolean> {
  let identity: string | null = null;
  while (!identity && !until()) {
    identity = await workerRunning(h.services.client, id, activityType).catch(() => null);
    if (!identity) await sleep(10);
  }
  if (!identity) return false;
  await sleep(delayMs);
  const victim = fleet.workers.find((w) => w.identity === identity);
  if (!victim) return false;
  const inFlight = (await workerRunning(h.services.client, id, activityType).catch(() => null)) === identity;
  await fleet.kill(victim);
  // the surviving worker takes the retried activity; the replacement joins when it is ready
  replacements.push(fleet.start());
  return inFlight;
}

const replacements: Promise<unknown>[] = [];
/** Trials go on while a replacement starts, unless no worker is left to kill. */
const fleetRestored = async () => {
  if (fleet.workers.length < 1) await Promise.all(replacements.splice(0));
};

/**
 * The watchdog evaluates in the workflow task that delivers its change (a local activity): waits until a workflow task
 * of `id` has started, waits `delayMs` more and kills every worker (the one running the task among them); two
 * replacements start. The kill landed mid-task when the server then timed that task out (see `timedOutTasks`).
 */
async function killDuringWorkflowTask(id: string, delayMs: number, until: () => boolean): Promise<void> {
  const started = temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED;
  for (;;) {
    if (until()) return;
    const description = await h.services.client.workflow
      .getHandle(id)
      .describe()
      .catch(() => null);
    if (description?.raw.pendingWorkflowTask?.state === started) break;
    await sleep(5);
  }
  await sleep(delayMs);
  await Promise.all(fleet.workers.map((w) => fleet.kill(w)));
  replacements.push(fleet.start(), fleet.start());
}

/**
 * Runs `trial` until `wanted` of its kills landed in flight (a kill that lands after the work finished proves
 * nothing), at most `max` times; returns how many landed. Sized to prove the property at each random point a kill
 * lands, not to count throughput: the many-trial versions are `npm run bench` scenarios' job.
 */
async function trialsUntilLanded(wanted: number, max: number, trial: (n: number) => Promise<boolean>) {
  let landed = 0;
  for (let n = 0; n < max && landed < wanted; n++) if (await trial(n)) landed++;
  return landed;
}

const timedOutTasks = async (id: string) =>
  ((await h.services.client.workflow.getHandle(id).fetchHistory()).events ?? []).filter(
    (e) => e.workflowTaskTimedOutEventAttributes,
  ).length;

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
    await killDuringWorkflowTask(workflowId.taskWatchdog(root.id), Math.floor(random() * 100), () => woke);
    await watching;
    const landedMidTask = (await timedOutTasks(workflowId.taskWatchdog(root.id))) > 0;
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
    await fleetRestored();
    return landedMidTask;
  });
  expect(landed).toBe(2);
}, 900_000);

test('a worker killed at random points of a release fan-out: every owed resume exactly once (5 kills that land)', async () => {
  const random = seededRandom(7);
  const c = await seedCompany(h);
  // a miss (the fan-out ended before the random delay, as under a lighter load) halves the delay's range
  let maxDelayMs = 150;
  const landed = await trialsUntilLanded(5, 15, async () => {
    const { parent, holdId, interrupted, childIds } = await pausedFamily(h, c, 4);

    let answered = false;
    const releasing = h
      .request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {})
      .finally(() => (answered = true));
    const inFlight = await killMidActivity(
      workflowId.treeHold(holdId),
      'releaseHold',
      Math.floor(random() * maxDelayMs),
      () => answered,
    );
    if (!inFlight) maxDelayMs /= 2;
    await expectResumedExactlyOnce(h, await releasing, { childIds, interrupted });
    await fleetRestored();
    return inFlight;
  });
  // the kills must have hit the fan-out itself, or the trials prove little
  expect(landed).toBe(5);
}, 900_000);

test("a worker killed while dispatching a resolved blocker's resume: still exactly one resume (a kill that lands)", async () => {
  const random = seededRandom(11);
  const c = await seedCompany(h);
  // mid-`sleep` without a checkpoint (unknown outcome); the resumed run exits at once
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: [
      '-c',
      '[ "$TREEWARDEN_WAKE_REASON" = issue_tree_resumed ] && exit 0; echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600 & wait',
    ],
  });
  const landed = await trialsUntilLanded(1, 8, async (trial) => {
    const parent = await c.issue({ title: `stranded ${trial}` });
    const child = await c.issue({
      title: `child ${trial}`,
      parentId: parent.id,
      assigneeAgentId: agent.id,
      status: 'in_progress',
    });
    const runId: string = (await h.request('POST', `/api/issues/${child.id}/wake`, c.token, {})).body.runId;
    await eventually('the agent is mid-command', async () => existsSync(runFiles(runId, null).journal), 60_000);
    const hold = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' });
    await eventually(
      'the stop verified',
      async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).status === 'cancelled',
      60_000,
    );
    expect(
      (await h.request('POST', `/api/issues/${parent.id}/tree-holds/${hold.body.id}/release`, c.token, {})).body
        .skipped,
    ).toEqual([{ issueId: child.id, reason: 'execution_blocker' }]);
    const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId } });

    let dispatched = false;
    const resumedRuns = () =>
      h.services.db.run.findMany({ where: { issueId: child.id, wakeReason: 'issue_tree_resumed' } });
    const resolving = h.request('POST', `/api/execution-blockers/${blocker.id}/resolve`, c.token, {
      resolution: 'no_external_effects',
    });
    const watching = eventually('the resume', async () => (dispatched = (await resumedRuns()).length > 0), 120_000);
    const inFlight = await killMidActivity(
      workflowId.blockerResolution(blocker.id),
      'resumeAfterResolution',
      Math.floor(random() * 40),
      () => dispatched,
    );
    expect((await resolving).status).toBe(200);
    await watching;
    await eventually(
      'the resolution workflow completed',
      async () =>
        (await h.services.client.workflow.getHandle(workflowId.blockerResolution(blocker.id)).describe()).status
          .name === 'COMPLETED',
      120_000,
    );
    expect(await resumedRuns()).toHaveLength(1);
    expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(1);
    await fleetRestored();
    return inFlight;
  });
  // the dispatch is short: some kills land after it finished, but one must land inside it
  expect(landed).toBe(1);
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
  replacements.push(fleet.start());
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
