/**
 * @module Database calls are time-bounded and a write is never reported as failed after it
 * committed. A real PostgreSQL is wedged two ways: behind a TCP proxy that stops forwarding (a
 * database that stops answering), and with a table lock held by another session (a statement that
 * cannot finish). Assertions are on status codes and rows, never on durations.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { Client as PgClient } from 'pg';
import pino from 'pino';
import { buildApi } from '../api/server';
import { PatientPool } from '../db/patient-pool';
import { createTreewardenClient } from '../client';
import { parseConfig } from '../domain/config';
import { workflowId } from '../domain/ids';
import { connectServices } from '../runtime/services';
import { watchdogStateQuery } from '../workflows/definitions';
import type { TaskWatchdogInput } from '../workflows/task-watchdog';
import { REPO_ROOT } from '../testing/stack';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { startWedgeableProxy, type WedgeableProxy } from './support/wedgeable-proxy';
import { workerFleet } from '../testing/worker-fleet';

let h: Harness;
let proxy: WedgeableProxy;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_DB_QUERY_TIMEOUT_MS: '1500', TREEWARDEN_DB_CONNECT_TIMEOUT_MS: '1500' });
});
beforeEach(async () => {
  proxy = await startWedgeableProxy(h.env.DATABASE_URL);
});
afterEach(async () => {
  await proxy?.close();
});
afterAll(async () => {
  await h?.close();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const post = (url: string, token: string, body: unknown, idempotencyKey?: string) =>
  fetch(`${h.apiUrl}${url}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: JSON.stringify(body),
  }).then(async (r) => ({
    status: r.status,
    replayed: r.headers.get('idempotent-replayed'),
    body: (await r.json()) as Record<string, any>,
  }));

test('a burst that finds the pool full waits for a connection instead of failing', async () => {
  const pool = new PatientPool({ connectionString: h.env.DATABASE_URL, max: 1, connectionTimeoutMillis: 300 });
  try {
    const held = await pool.connect();
    const waiting = pool.query<{ one: number }>('SELECT 1 AS one');
    await sleep(1_000); // longer than the pool's wait: the query's first ask for a connection has failed by now
    held.release();
    expect((await waiting).rows).toEqual([{ one: 1 }]);
  } finally {
    await pool.end();
  }
});

describe('a database that stops answering', () => {
  test('/healthz answers 503 instead of hanging, and requests fail with 503 instead of hanging', async () => {
    const config = parseConfig({
      ...h.env,
      DATABASE_URL: proxy.url(h.env.DATABASE_URL),
      TREEWARDEN_DB_QUERY_TIMEOUT_MS: '1000',
      TREEWARDEN_DB_CONNECT_TIMEOUT_MS: '1000',
    });
    const services = await connectServices(config, h.services.temporal, pino({ level: 'silent' }));
    const app = buildApi(services);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      // the first call also loads the client and connects; it may need more than the probe's deadline
      await eventually('healthy before the wedge', async () => (await fetch(`${url}/healthz`)).status === 200);
      const c = await seedCompany(h);
      proxy.wedge();
      expect((await fetch(`${url}/healthz`)).status).toBe(503);
      const read = await fetch(`${url}/api/companies/${c.companyId}/issues`, {
        headers: { authorization: `Bearer ${c.token}` },
      });
      expect(read.status).toBe(503);
    } finally {
      await app.close();
      await services.close().catch(() => {});
    }
  });

  test('the API process exits on SIGTERM while a request waits on the wedged database', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      cwd: REPO_ROOT,
      // statements are allowed a minute: only the shutdown grace can end this process in time
      env: {
        ...process.env,
        ...h.env,
        DATABASE_URL: proxy.url(h.env.DATABASE_URL),
        TREEWARDEN_API_PORT: String(port),
        TREEWARDEN_DB_QUERY_TIMEOUT_MS: '60000',
        TREEWARDEN_SHUTDOWN_GRACE_MS: '2000',
      },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const api = `http://127.0.0.1:${port}`;
    await eventually('the API process answers', async () => (await fetch(`${api}/healthz`)).status === 200, 60_000);
    const c = await seedCompany(h);
    proxy.wedge();
    const stuck = fetch(`${api}/api/companies/${c.companyId}/issues`, {
      headers: { authorization: `Bearer ${c.token}` },
    }).catch((error: unknown) => error);
    await eventually(
      'the request reached the wedged database',
      async () => (await fetch(`${api}/healthz`)).status === 503,
    );
    child.kill('SIGTERM');
    const code = await exited;
    expect(typeof code).toBe('number');
    await stuck;
  });

  test('a worker process exits on SIGTERM while its activity waits on the wedged database', async () => {
    const fleet = workerFleet(h);
    // a queue of its own, so the evaluation runs in this process and not in the harness's worker
    const taskQueue = `wedged-${randomUUID()}`;
    try {
      const worker = await fleet.start({
        DATABASE_URL: proxy.url(h.env.DATABASE_URL),
        TREEWARDEN_TASK_QUEUE: taskQueue,
        TREEWARDEN_DB_QUERY_TIMEOUT_MS: '60000',
        TREEWARDEN_SHUTDOWN_GRACE_MS: '2000',
      });
      proxy.wedge();
      const input: TaskWatchdogInput = {
        watchdogId: randomUUID(),
        issueId: randomUUID(),
        tickMs: 3_600_000,
        debounceMs: 1,
      };
      const handle = await h.services.client.workflow.start('taskWatchdogWorkflow', {
        workflowId: `wedged-${input.issueId}`,
        taskQueue,
        args: [input],
      });
      // the evaluation's local attempt waits on the database until its 10 s timeout, then it goes on as an activity
      await eventually(
        'the evaluation started on the wedged worker',
        async () => (await handle.describe()).raw.pendingActivities?.some((a) => a.lastStartedTime),
        60_000,
      );
      const code = await fleet.stop(worker);
      expect(typeof code).toBe('number');
      await handle.terminate('test over');
    } finally {
      await fleet.close();
    }
  });
});

describe('a failure after the commit', () => {
  test('a material write whose change cannot be dispatched yet is still 201, and its change arrives once the database answers', async () => {
    const c = await seedCompany(h);
    const watcher = await c.agent();
    const root = await c.issue({ title: 'ship feature', watchdog: { agentId: watcher.id } });
    const handle = h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id));
    await eventually('the watchdog evaluated', async () => {
      const state = await handle.query(watchdogStateQuery);
      return state.evaluations > 0 && state.pendingChanges === 0 ? state : null;
    });
    /** How many `subtreeChanged` signals the watchdog received for a created issue (its root's own is one). */
    const creations = async () =>
      ((await handle.fetchHistory()).events ?? []).filter((e) => {
        const signal = e.workflowExecutionSignaledEventAttributes;
        if (signal?.signalName !== 'subtreeChanged') return false;
        const { reason } = JSON.parse(Buffer.from(signal.input!.payloads![0].data!).toString()) as { reason: string };
        return reason.includes('issue_created');
      }).length;
    const before = await creations();
    // another session holds the watchdog table: the write commits, finding the watchdogs to signal cannot
    const locker = new PgClient({ connectionString: h.env.DATABASE_URL });
    await locker.connect();
    let released = false;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "Watchdog" IN ACCESS EXCLUSIVE MODE');
      const child = { title: 'follow-up', parentId: root.id };
      const first = await post(`/api/companies/${c.companyId}/issues`, c.token, child, 'child-1');
      expect(first.status).toBe(201);
      expect(await creations()).toBe(before);
      await locker.query('ROLLBACK');
      released = true;
      expect(await h.services.db.issue.count({ where: { parentId: root.id, title: 'follow-up' } })).toBe(1);
      await eventually('the change delivered', async () => (await creations()) === before + 1);

      // the client did not trust the answer and retries with the same key: nothing new is written
      const retry = await post(`/api/companies/${c.companyId}/issues`, c.token, child, 'child-1');
      expect(retry).toMatchObject({ status: 201, replayed: 'true', body: first.body });
      expect(await h.services.db.issue.count({ where: { parentId: root.id, title: 'follow-up' } })).toBe(1);
    } finally {
      if (!released) await locker.query('ROLLBACK');
      await locker.end();
    }
  });

  test('a failing write answers 503 saying the change may have been applied', async () => {
    const c = await seedCompany(h);
    const root = await c.issue({ title: 'ship feature' });
    const locker = new PgClient({ connectionString: h.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "Comment" IN ACCESS EXCLUSIVE MODE');
      const failed = await post(`/api/issues/${root.id}/comments`, c.token, { body: 'hello' });
      expect(failed.status).toBe(503);
      expect(failed.body.error.message).toMatch(/may have been applied/);
      expect(failed.body.error.message).not.toMatch(/nothing was changed/);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });
});

describe('Idempotency-Key on the routes that create', () => {
  test('the same key and body give the same response and one row, even racing; another body is 422', async () => {
    const c = await seedCompany(h);
    const root = await c.issue({ title: 'ship feature' });
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => post(`/api/issues/${root.id}/comments`, c.token, { body: 'once' }, 'key-a')),
    );
    expect(new Set(racing.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(racing.map((r) => r.body.id)).size).toBe(1);
    expect(await h.services.db.comment.count({ where: { issueId: root.id } })).toBe(1);

    const other = await post(`/api/issues/${root.id}/comments`, c.token, { body: 'something else' }, 'key-a');
    expect(other.status).toBe(422);
    expect(other.body.error.message).toMatch(/Idempotency-Key/);
    expect(await h.services.db.comment.count({ where: { issueId: root.id } })).toBe(1);
  });

  test('issues and agents are created once per key', async () => {
    const c = await seedCompany(h);
    const issueBody = { title: 'retry me' };
    const issues = [
      await post(`/api/companies/${c.companyId}/issues`, c.token, issueBody, 'issue-1'),
      await post(`/api/companies/${c.companyId}/issues`, c.token, issueBody, 'issue-1'),
    ];
    expect(issues.map((r) => r.status)).toEqual([201, 201]);
    expect(issues[1]).toMatchObject({ replayed: 'true', body: issues[0].body });
    expect(await h.services.db.issue.count({ where: { companyId: c.companyId, title: 'retry me' } })).toBe(1);

    const agentBody = { name: 'reviewer', adapter: { type: 'noop' } };
    const agents = [
      await post(`/api/companies/${c.companyId}/agents`, c.token, agentBody, 'agent-1'),
      await post(`/api/companies/${c.companyId}/agents`, c.token, agentBody, 'agent-1'),
    ];
    expect(agents[1]).toMatchObject({ status: 201, replayed: 'true', body: agents[0].body });
    expect(await h.services.db.agent.count({ where: { companyId: c.companyId, name: 'reviewer' } })).toBe(1);
    // a key reused on another route is another request
    expect((await post(`/api/companies/${c.companyId}/issues`, c.token, issueBody, 'agent-1')).status).toBe(422);
  });

  test('the typed client sends the key', async () => {
    const c = await seedCompany(h);
    const client = createTreewardenClient({ baseUrl: h.apiUrl, token: c.token });
    const root = await client.createIssue(c.companyId, { title: 'ship feature' }, { idempotencyKey: 'client-issue' });
    const [first, again] = [
      await client.addComment(root.id, 'done?', { idempotencyKey: 'client-comment' }),
      await client.addComment(root.id, 'done?', { idempotencyKey: 'client-comment' }),
    ];
    expect(again).toEqual(first);
    expect(
      (await client.createIssue(c.companyId, { title: 'ship feature' }, { idempotencyKey: 'client-issue' })).id,
    ).toBe(root.id);
    expect(await h.services.db.comment.count({ where: { issueId: root.id } })).toBe(1);
  });

  test('a malformed key is a 400 naming the header, and writes nothing', async () => {
    const c = await seedCompany(h);
    const r = await post(`/api/companies/${c.companyId}/issues`, c.token, { title: 'x' }, 'has space');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/Idempotency-Key/);
    expect(await h.services.db.issue.count({ where: { companyId: c.companyId } })).toBe(0);
  });
});
