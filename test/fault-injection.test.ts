/**
 * @module Fault injection (fixed seeds, bounded): the Temporal server restarts on its SQLite file,
 * PostgreSQL drops every connection mid-flight, and signals arrive duplicated and out of order,
 * while real worker processes run. After each fault the invariants hold: one wake per
 * fingerprint, every owed resume exactly once, no stop reported clean while a process lives.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client as PgClient } from 'pg';
import { workflowId } from '../domain/ids';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { startDevServer, type DevServer } from '../scripts/provision/temporal-dev-server';
import { ownedProcesses } from '../processes/process-table';
import { subtreeChangedSignal, watchdogStateQuery } from '../workflows/definitions';
import { TMP_DIR } from '../testing/stack';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { pausedFamily } from './support/paused-family';
import { seededRandom } from './support/seeded-random';
import { workerFleet, type WorkerFleet } from '../testing/worker-fleet';
import { BLOCKED } from './support/blocked';

let server: DevServer;
let h: Harness;
let fleet: WorkerFleet;
const dbFile = join(TMP_DIR, `fault-temporal-${process.pid}.db`);

const startServer = (port?: number) =>
  startDevServer({
    ...(port ? { port } : {}),
    uiPort: null,
    dbFile,
    searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES },
    log: () => undefined,
  });

beforeAll(async () => {
  mkdirSync(TMP_DIR, { recursive: true });
  server = await startServer();
  h = await startHarness(
    { TEMPORAL_ADDRESS: server.address, TREEWARDEN_HEARTBEAT_TIMEOUT_MS: '4000', TREEWARDEN_FIRST_RUN_GRACE_MS: '1' },
    { inProcessWorker: false },
  );
  fleet = workerFleet(h);
  await Promise.all([fleet.start(), fleet.start()]);
});
afterAll(async () => {
  await fleet?.close();
  await h?.close();
  await server?.stop();
  rmSync(dbFile, { force: true });
});

const watchdogWakes = (watchdogId: string) =>
  h.services.db.wakeRequest.findMany({ where: { idempotencyKey: { startsWith: `task_watchdog:${watchdogId}:` } } });

async function watchedStoppedTree(c: Awaited<ReturnType<typeof seedCompany>>) {
  const watcher = await c.agent();
  const root = await c.issue({ title: 'watched' });
  const leaf = await c.issue({ title: 'leaf', parentId: root.id, status: 'done' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  expect(put.status).toBe(201);
  await eventually('first wake', async () => (await watchdogWakes(put.body.id)).length === 1, 60_000);
  return { root, leaf, watchdogId: put.body.id as string };
}

/** Every fingerprint woke exactly once. */
async function oneWakePerFingerprint(watchdogId: string) {
  const wakes = await watchdogWakes(watchdogId);
  const keys = wakes.map((w) => w.idempotencyKey);
  expect(new Set(keys).size).toBe(keys.length);
  return wakes.length;
}

/** Every interrupted run of the hold has exactly one claim and one resumed run. */
async function resumedExactlyOnce(interrupted: string[]) {
  for (const runId of interrupted) {
    const run = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(1);
    expect(await h.services.db.run.count({ where: { issueId: run.issueId, wakeReason: 'issue_tree_resumed' } })).toBe(
      1,
    );
  }
}

/** No run with a clean stop result has an owned process alive. */
async function noCleanStopWithLiveProcess(companyId: string) {
  for (const run of await h.services.db.run.findMany({ where: { companyId } })) {
    if ((run.stopResult as { verdict?: string } | null)?.verdict !== 'terminal-clean') continue;
    expect(ownedProcesses({ ownerToken: run.ownerToken, processGroupId: run.processGroupId })).toEqual([]);
  }
}

test('the Temporal server restarts on its SQLite file: watchdogs and holds carry on, nothing twice', async () => {
  const c = await seedCompany(h);
  const { leaf, watchdogId } = await watchedStoppedTree(c);
  const family = await pausedFamily(h, c, 3);

  const port = Number(server.address.split(':')[1]);
  await server.stop();
  server = await startServer(port);

  const released = await eventually(
    'release after the restart',
    async () => {
      const r = await h.request(
        'POST',
        `/api/issues/${family.parent.id}/tree-holds/${family.holdId}/release`,
        c.token,
        {},
      );
      return r.status === 200 ? r : null;
    },
    90_000,
  );
  expect(released.body.resumed).toHaveLength(3);
  await resumedExactlyOnce(family.interrupted);
  expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED)).status).toBe(200);
  await eventually('a wake for the new stop', async () => (await watchdogWakes(watchdogId)).length === 2, 60_000);
  expect(await oneWakePerFingerprint(watchdogId)).toBe(2);
  await noCleanStopWithLiveProcess(c.companyId);
}, 400_000);

test('PostgreSQL drops every connection at random moments: no worker dies, every wake and resume lands once', async () => {
  const random = seededRandom(11);
  const c = await seedCompany(h);
  const { leaf, watchdogId } = await watchedStoppedTree(c);
  const family = await pausedFamily(h, c, 2);
  const admin = new PgClient({ connectionString: h.env.DATABASE_URL });
  admin.on('error', () => undefined); // its own backend is spared; a network error must not crash the test
  await admin.connect();
  const dbName = new URL(h.env.DATABASE_URL).pathname.slice(1);
  const dropAll = () =>
    admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [dbName],
    );
  const workersBefore = fleet.workers.map((w) => w.pid).sort();
  let dropping = true;
  const dropUntil = Date.now() + 30_000; // bounded even if the test times out
  const dropper = (async () => {
    while (dropping && Date.now() < dropUntil) {
      await sleep(50 + Math.floor(random() * 250));
      await dropAll();
    }
  })();
  try {
    // the API answers 500 when its own connection is cut mid-request: callers retry, as the client does
    const retry = async <T>(what: string, call: () => Promise<{ status: number; body: T }>, ok: number) =>
      eventually(
        what,
        async () => {
          const r = await call().catch(() => null);
          return r && (r.status === ok || r.status === 409) ? r : null;
        },
        90_000,
      );
    const released = await retry(
      'release',
      () => h.request('POST', `/api/issues/${family.parent.id}/tree-holds/${family.holdId}/release`, c.token, {}),
      200,
    );
    expect([200, 409]).toContain(released.status);
    await retry('material change', () => h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED), 200);
  } finally {
    dropping = false;
    await dropper;
    await admin.end();
  }
  await eventually(
    'every owed resume',
    async () =>
      (await h.services.db.resumeClaim.count({ where: { interruptedRunId: { in: family.interrupted } } })) === 2,
    90_000,
  );
  await resumedExactlyOnce(family.interrupted);
  await eventually('a wake for the new stop', async () => (await watchdogWakes(watchdogId)).length === 2, 90_000);
  expect(await oneWakePerFingerprint(watchdogId)).toBe(2);
  expect(fleet.workers.map((w) => w.pid).sort()).toEqual(workersBefore);
  await noCleanStopWithLiveProcess(c.companyId);
}, 400_000);

test('signals duplicated and reordered: one wake per fingerprint', async () => {
  const random = seededRandom(23);
  const c = await seedCompany(h);
  const { leaf, watchdogId } = await watchedStoppedTree(c);
  const handle = h.services.client.workflow.getHandle(
    workflowId.taskWatchdog((await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } })).issueId),
  );
  const signals = Array.from({ length: 60 }, (_, i) => ({ watchdogId, reason: `change-${i % 20}` }));
  const shuffled = [...signals, ...signals].sort(() => random() - 0.5);
  await Promise.all(shuffled.map((s) => handle.signal(subtreeChangedSignal, s)));
  expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED)).status).toBe(200);
  await Promise.all(shuffled.slice(0, 40).map((s) => handle.signal(subtreeChangedSignal, s)));
  const lastSignalAt = Date.now();
  await eventually('a wake for the new stop', async () => (await watchdogWakes(watchdogId)).length === 2, 60_000);
  // every signal is processed (the query sees them all) and an evaluation of the same stop finished after the last
  await eventually(
    'an evaluation after the last signal, none pending',
    async () => {
      const { pendingChanges, lastEvaluation } = await handle.query(watchdogStateQuery);
      return pendingChanges === 0 && lastEvaluation !== null && Date.parse(lastEvaluation.evaluatedAt) > lastSignalAt;
    },
    60_000,
  );
  expect(await oneWakePerFingerprint(watchdogId)).toBe(2);
}, 300_000);
