/**
 * @module Fairness between companies under a storm of changes (issue 30, item 5): company A makes 500 material changes
 * under its 40 watchdogs, then company B makes one; B's watchdog evaluates its change before half of A's watchdogs
 * have evaluated the storm. The queue is built while no worker polls (the change dispatcher signals every watchdog,
 * each signal leaves a workflow task in the queue, B's last of all), then a worker with two workflow task slots drains
 * it. The ordering comes from the watchdogs' histories (when the server handed out each one's workflow task), not
 * from a timing. Without `matching.enableFairness` the queue drains first in, first out, and B's task goes last.
 */
import { NativeConnection } from '@temporalio/worker';
import { startChangeDispatcher } from '../changes/dispatcher';
import { forEachConcurrently } from '../domain/concurrency';
import { workflowId } from '../domain/ids';
import { createWorker } from '../workers/create-worker';
import { eventually, seedCompany, startHarness, workflowBundle, type Harness } from '../testing/harness';
import { testStack } from '../testing/stack';

const A_WATCHDOGS = 40;
const STORM_CHANGES = 500;

let h: Harness;
let connection: NativeConnection;
let dispatcher: { stop(): Promise<void> };
beforeAll(async () => {
  // no in-process worker: the test decides when one polls. No workflow cache, so no task waits on a sticky queue of
  // a worker that has stopped
  h = await startHarness(
    {
      TREEWARDEN_WATCHDOG_TICK_MS: '3600000',
      TREEWARDEN_WORKER_MAX_WORKFLOW_TASKS: '2',
      TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS: '0',
    },
    { inProcessWorker: false },
  );
  connection = await NativeConnection.connect({ address: testStack().temporalAddress });
  dispatcher = startChangeDispatcher(h.services, 1_000);
});
afterAll(async () => {
  await dispatcher?.stop();
  await connection?.close();
  await h?.close();
});

/** A worker polling until `stop()`; its dispatchers are not started (the test's own dispatcher runs throughout). */
async function pollingWorker() {
  const worker = await createWorker(h.services, { connection, workflowBundle: await workflowBundle() });
  const polling = Promise.all([worker.shared.run(), worker.agents.run(), worker.host.run()]);
  return {
    async stop() {
      worker.shutdown();
      await polling;
    },
  };
}

type Company = Awaited<ReturnType<typeof seedCompany>>;

/** A watched root over one leaf, watched in observe mode (a stop wakes nobody); returns the root and the leaf. */
async function watchedLeaf(c: Company, watcherId: string) {
  const root = await c.issue({ title: 'watched' });
  const leaf = await c.issue({ title: 'leaf', parentId: root.id, status: 'in_progress' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
    agentId: watcherId,
    mode: 'observe',
  });
  expect([200, 201]).toContain(put.status);
  return { rootId: root.id, leafId: leaf.id };
}

const pendingChanges = () => h.services.db.subtreeChange.count();

/** Every watchdog has evaluated every change recorded under it. */
const allCaughtUp = async () => {
  const rows = await h.services.db.watchdog.findMany({ select: { changeVersion: true, evaluatedChangeVersion: true } });
  return rows.length === A_WATCHDOGS + 1 && rows.every((w) => w.evaluatedChangeVersion === w.changeVersion);
};

/** When the watchdog's first signal after `since` reached the server, and when its next workflow task was handed out. */
async function firstTaskAfter(rootId: string, since: Date): Promise<{ signalled: number; started: number }> {
  const history = await h.services.client.workflow.getHandle(workflowId.taskWatchdog(rootId)).fetchHistory();
  const events = history.events ?? [];
  const time = (event: (typeof events)[number]) =>
    Number(event.eventTime!.seconds) * 1000 + Math.floor((event.eventTime!.nanos ?? 0) / 1e6);
  const signal = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes && time(e) >= since.getTime());
  const started = events.slice(signal).find((e) => e.workflowTaskStartedEventAttributes);
  if (signal < 0 || !started) throw new Error(`task-watchdog:${rootId} has no workflow task after the storm`);
  return { signalled: time(events[signal]), started: time(started) };
}

test("company B's one change is evaluated before half of company A's storm of 500 changes is", async () => {
  const a = await seedCompany(h, 'Storming');
  const b = await seedCompany(h, 'Changing once');
  const setup = await pollingWorker();
  const aWatcher = (await a.agent()).id;
  const watchedA: { rootId: string; leafId: string }[] = [];
  for (let i = 0; i < A_WATCHDOGS; i++) watchedA.push(await watchedLeaf(a, aWatcher));
  const watchedB = await watchedLeaf(b, (await b.agent()).id);
  await eventually('every watchdog idle', async () => (await pendingChanges()) === 0 && allCaughtUp(), 120_000);
  await setup.stop();

  // nobody polls: each change the dispatcher delivers leaves its watchdog's workflow task in the queue
  const stormFrom = new Date();
  const statuses = ['todo', 'in_progress'] as const;
  await forEachConcurrently(
    Array.from({ length: STORM_CHANGES }, (_, i) => i),
    8,
    async (i) => {
      const { leafId } = watchedA[i % A_WATCHDOGS];
      const status = statuses[Math.floor(i / A_WATCHDOGS) % 2];
      const patched = await h.request('PATCH', `/api/issues/${leafId}`, a.token, { status });
      expect(patched.status).toBe(200);
    },
  );
  await eventually("A's storm delivered", async () => (await pendingChanges()) === 0, 120_000);
  const patched = await h.request('PATCH', `/api/issues/${watchedB.leafId}`, b.token, { status: 'todo' });
  expect(patched.status).toBe(200);
  await eventually("B's change delivered", async () => (await pendingChanges()) === 0);

  const drain = await pollingWorker();
  try {
    await eventually('every watchdog evaluated its changes', allCaughtUp, 300_000);
  } finally {
    await drain.stop();
  }
  const taskA = await Promise.all(watchedA.map(({ rootId }) => firstTaskAfter(rootId, stormFrom)));
  const taskB = await firstTaskAfter(watchedB.rootId, stormFrom);
  // first in, first out, B's task would go last: it entered the queue after every task of A's
  expect(taskA.every(({ signalled }) => signalled <= taskB.signalled)).toBe(true);
  const aBeforeB = taskA.filter(({ started }) => started < taskB.started).length;
  expect(aBeforeB).toBeLessThan(A_WATCHDOGS / 2);
});
