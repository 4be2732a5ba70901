/**
 * @module Every committed change reaches its watchdogs (issue 26), with the processes users run: a separate API
 * process and worker processes. The API process is SIGKILLed right after a material write it committed while
 * Temporal was unreachable, and worker processes are SIGKILLed while they dispatch rounds: once Temporal is back,
 * each change is evaluated by its watchdog within seconds (the safety tick is an hour here), and no change is lost.
 * The watchdogs observe (issue 29, item 5): each evaluated stop leaves its fingerprint on the row, nobody is woken.
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../scripts/provision/ports';
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
  for (let i = 0; i < 10; i++) trees.push(await observedLeaf(c, `dispatched under kills ${i}`));
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
  // each watchdog's last observed stop is the subtree as it is now: its last change was evaluated
  for (const t of trees)
    await eventually(
      'the last change evaluated',
      async () => (await fingerprint(t.watchdogId)) === (await currentFingerprint(t.watchdogId)),
      60_000,
    );
});
