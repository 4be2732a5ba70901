/**
 * @module Worker processes killed with SIGKILL in the middle of an activity lose nothing: a watchdog
 * evaluation still gives exactly one wake, a release fan-out still gives every owed resume exactly
 * once, a restarted worker brings back every active watchdog's workflow, and a run whose worker
 * died is reconciled with nothing of it left running.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { workflowId } from '../domain/ids';
import { ownedProcesses } from '../runs/process-table';
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
    { TREEWARDEN_HEARTBEAT_TIMEOUT_MS: '4000', TREEWARDEN_FIRST_RUN_GRACE_MS: '1' },
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

test('a worker killed mid-evaluation still gives exactly one wake after recovery', async () => {
  const random = seededRandom(3);
  let landed = 0;
  for (let trial = 0; trial < 5; trial++) {
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
    const watching = eventually('the watchdog wake', async () => (woke = (await wakes()) > 0), 60_000);
    if (
      await killMidActivity(
        workflowId.taskWatchdog(root.id),
        'evaluateWatchdog',
        Math.floor(random() * 100),
        () => woke,
      )
    )
      landed++;
    await watching;
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
  }
  expect(landed).toBeGreaterThanOrEqual(3);
}, 600_000);

test('a worker killed at random points of a release fan-out: every owed resume exactly once (20 trials)', async () => {
  const random = seededRandom(7);
  const c = await seedCompany(h);
  let landed = 0;
  for (let trial = 0; trial < 20; trial++) {
    const { parent, holdId, interrupted, childIds } = await pausedFamily(h, c, 4);

    let answered = false;
    const releasing = h
      .request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {})
      .finally(() => (answered = true));
    if (await killMidActivity(workflowId.treeHold(holdId), 'releaseHold', Math.floor(random() * 150), () => answered))
      landed++;
    await expectResumedExactlyOnce(h, await releasing, { childIds, interrupted });
    await fleetRestored();
  }
  // most kills must have hit the fan-out itself, or the trials prove little
  expect(landed).toBeGreaterThanOrEqual(10);
}, 900_000);

test("a worker killed while dispatching a resolved blocker's resume: still exactly one resume (8 trials)", async () => {
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
  let landed = 0;
  for (let trial = 0; trial < 8; trial++) {
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
    if (
      await killMidActivity(
        workflowId.blockerResolution(blocker.id),
        'resumeAfterResolution',
        Math.floor(random() * 40),
        () => dispatched,
      )
    )
      landed++;
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
  }
  // the dispatch is short: some kills land after it finished, but some must land inside it
  expect(landed).toBeGreaterThanOrEqual(1);
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

test('a run whose worker dies is reconciled after the heartbeat timeout: its processes are found by owner token and stopped', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', 'setsid sleep 120 & sleep 120'] });
  const issue = await c.issue({ title: 'orphaned by a crash', assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  const runId: string = wake.body.runId;
  const owned = async () => {
    const run = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
    return ownedProcesses({ ownerToken: run.ownerToken, processGroupId: run.processGroupId });
  };
  await eventually('the run and its detached child are running', async () => (await owned()).length >= 3);
  const identity = await eventually('the worker running the run', () =>
    workerRunning(h.services.client, workflowId.agentRun(runId), 'executeRun'),
  );
  await fleet.kill(fleet.workers.find((w) => w.identity === identity)!);
  replacements.push(fleet.start());
  expect((await owned()).length).toBeGreaterThanOrEqual(3); // a crashed worker leaves its run's processes behind
  const run = await eventually(
    'the run reconciled',
    async () => {
      const row = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
      return row.status === 'failed' ? row : null;
    },
    60_000,
  );
  expect(run.failureState).toBe('uninspected');
  expect(run.error).toMatch(/timed out|timeout|heartbeat/i);
  expect(await owned()).toEqual([]);
  expect((run.stopResult as { verdict: string }).verdict).toBe('terminal-clean');
});
