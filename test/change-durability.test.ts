/**
 * @module Every committed change reaches its watchdogs (issue 26), with the processes users run: a separate API
 * process and worker processes. The API process is SIGKILLed right after a material write it committed while
 * Temporal was unreachable, and worker processes are SIGKILLed while they dispatch rounds: once Temporal is back,
 * each change is evaluated by its watchdog within seconds (the safety tick is an hour here), and no change is lost.
 * Observing watchdogs (issue 29, item 5) leave each evaluated stop's fingerprint on the row and wake nobody; under the
 * worker kills, half the watchdogs review instead: each stop they saw is woken for once (one wake, one run, one
 * trigger counted), and the last stop is reviewed.
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../runtime/ports';
import { classifySubtree } from '../domain/watchdog';
import { loadEvaluationInput } from '../watchdogs/subtree-snapshot';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { REPO_ROOT } from '../testing/stack';
import { workerFleet, type WorkerFleet } from '../testing/worker-fleet';
import { seededRandom } from './support/seeded-random';
import { startWedgeableProxy, type WedgeableProxy } from './support/wedgeable-proxy';

let h: Harness;
let fleet: WorkerFleet;
let temporal: WedgeableProxy;
beforeAll(async () => {
  h = await startHarness(
    {
      TREEWARDEN_WATCHDOG_TICK_MS: '3600000',
      TREEWARDEN_FIRST_RUN_GRACE_MS: '1',
      TREEWARDEN_CHANGE_DISPATCH_RETRY_MS: '500',
      TREEWARDEN_HEARTBEAT_TIMEOUT_MS: '4000',
    },
    { inProcessWorker: false },
  );
  fleet = workerFleet(h);
  temporal = await startWedgeableProxy(`tcp://${h.env.TEMPORAL_ADDRESS}`);
});
afterAll(async () => {
  await fleet?.close();
  await temporal?.close();
  await h?.close();
});

type Company = Awaited<ReturnType<typeof seedCompany>>;

/** A watched root (observe mode) over one leaf; returns once its first stop is observed. */
async function observedLeaf(c: Company, title: string) {
  const root = await c.issue({ title });
  const leaf = await c.issue({ title: `${title}: leaf`, parentId: root.id, status: 'in_progress' });
  const watcher = await c.agent();
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
    agentId: watcher.id,
    mode: 'observe',
  });
  expect(put.status).toBe(201);
  const watchdogId = put.body.id as string;
  await eventually(`${title}: first stop observed`, async () => (await fingerprint(watchdogId)) !== null, 60_000);
  return { rootId: root.id, leafId: leaf.id, watchdogId };
}

/** A watched root (review mode, a noop reviewer) over one leaf; returns once its first stop is woken for. */
async function reviewedLeaf(c: Company, title: string) {
  const root = await c.issue({ title });
  const leaf = await c.issue({ title: `${title}: leaf`, parentId: root.id, status: 'in_progress' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: (await c.agent()).id });
  expect(put.status).toBe(201);
  const watchdogId = put.body.id as string;
  await eventually(`${title}: first stop woken for`, async () => (await reviewWakes(watchdogId)).length > 0, 60_000);
  return { rootId: root.id, leafId: leaf.id, watchdogId };
}

const reviewWakes = (watchdogId: string) =>
  h.services.db.wakeRequest.findMany({ where: { idempotencyKey: { startsWith: `task_watchdog:${watchdogId}:` } } });

const fingerprint = async (watchdogId: string) =>
  (await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } })).lastObservedFingerprint;

/** The stop fingerprint of the subtree as it is now, read and classified here, writing nothing. */
async function currentFingerprint(watchdogId: string): Promise<string | null> {
  const { watchdog, nodes } = await loadEvaluationInput(h.services.db, watchdogId);
  const config = { agentId: watchdog!.agentId, instructions: watchdog!.instructions };
  return classifySubtree(nodes, config, new Date(), h.services.config.TREEWARDEN_FIRST_RUN_GRACE_MS).fingerprint;
}

test('the API process SIGKILLed right after a committed write while Temporal is unreachable: the change is evaluated once Temporal is back', async () => {
  const worker = await fleet.start({ TEMPORAL_ADDRESS: temporal.address });
  const c = await seedCompany(h);
  const watched = await observedLeaf(c, 'written by a dying API');
  const before = await fingerprint(watched.watchdogId);

  const port = await freePort();
  const api = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...h.env, TEMPORAL_ADDRESS: temporal.address, TREEWARDEN_API_PORT: String(port) },
    stdio: 'ignore',
  });
  const apiExited = new Promise((resolve) => api.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  await eventually('the API process answers', async () => (await fetch(`${url}/healthz`)).status === 200, 60_000);

  temporal.down();
  const write = await fetch(`${url}/api/issues/${watched.leafId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'in_review' }),
  });
  expect(write.status).toBe(200);
  api.kill('SIGKILL');
  await apiExited;
  // committed with its change, which is still owed: a delivered change leaves the outbox, and the watchdog has not
  // evaluated it (no wait needed: the row proves nothing delivered it)
  expect(await h.services.db.subtreeChange.count({ where: { issueIds: { has: watched.leafId } } })).toBe(1);
  expect(await fingerprint(watched.watchdogId)).toBe(before);

  temporal.up();
  const after = await eventually(
    'the change evaluated',
    async () => {
      const now = await fingerprint(watched.watchdogId);
      return now !== before ? now : null;
    },
    60_000,
  );
  expect(await currentFingerprint(watched.watchdogId)).toBe(after);
  expect(await h.services.db.subtreeChange.count({ where: { issueIds: { has: watched.leafId } } })).toBe(0);
  await fleet.kill(worker);
});

test('worker processes SIGKILLed at random points while changes are dispatched: every change reaches its watchdog (5 kills)', async () => {
  const workers = [await fleet.start(), await fleet.start()];
  const c = await seedCompany(h);
  const trees = [];
  for (let i = 0; i < 10; i++)
    trees.push(
      i % 2 === 0
        ? { review: false, ...(await observedLeaf(c, `observed under kills ${i}`)) }
        : { review: true, ...(await reviewedLeaf(c, `reviewed under kills ${i}`)) },
    );
  const random = seededRandom(26);
  const statuses = ['in_review', 'todo', 'backlog', 'in_progress'];
  for (let round = 0; round < 5; round++) {
    await Promise.all(
      trees.map((t, i) =>
        h.request('PATCH', `/api/issues/${t.leafId}`, c.token, { status: statuses[(round + i) % statuses.length] }),
      ),
    );
    await sleep(random() * 300);
    const victim = workers.splice(Math.floor(random() * workers.length), 1)[0];
    await fleet.kill(victim);
    workers.push(await fleet.start());
  }
  await eventually('every change delivered', async () => (await h.services.db.subtreeChange.count()) === 0, 60_000);
  // each observing watchdog's last observed stop is the subtree as it is now: its last change was evaluated
  for (const t of trees.filter((tree) => !tree.review))
    await eventually(
      'the last change evaluated',
      async () => (await fingerprint(t.watchdogId)) === (await currentFingerprint(t.watchdogId)),
      60_000,
    );
  // each reviewing watchdog woke for its last stop (a stop seen while a review ran waits for that run's end), and
  // every stop it woke for is one wake, one run and one trigger counted, however its workers died
  for (const t of trees.filter((tree) => tree.review)) {
    const last = await currentFingerprint(t.watchdogId);
    const key = `task_watchdog:${t.watchdogId}:${last}`;
    const wakes = await eventually(
      'the last stop woken for, and every wake dispatched',
      async () => {
        const all = await reviewWakes(t.watchdogId);
        return all.some((w) => w.idempotencyKey === key) && all.every((w) => w.status !== 'queued') ? all : null;
      },
      120_000,
    );
    const runs = await h.services.db.run.findMany({ where: { wakeRequestId: { in: wakes.map((w) => w.id) } } });
    const watchdog = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: t.watchdogId } });
    expect([runs.length, watchdog.triggerCount]).toEqual([wakes.length, wakes.length]);
  }
}, 600_000);
