/**
 * @module The agent sandbox on the deploy topology, under a non-root service user (issue 43): `npm run worker` and
 * `npm run api` as separate processes running as `nobody`, with a data folder and a TMPDIR of their own, secrets
 * given as a file (the database URL) and as a variable (the admin token), against the test's PostgreSQL and Temporal.
 * Unprivileged, the worker has no cgroup (process-group containment) and builds the sandbox from an unprivileged
 * user namespace. The hostile agent of test/agent-sandbox.test.ts runs as the service's own user here: it still
 * finds no secret and no other run's token, and reaches nothing but the API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../runtime/ports';
import { ADMIN_TOKEN, eventually, runRow, startHarness, type Harness } from '../testing/harness';
import { callApi } from '../testing/service-stack';
import { REPO_ROOT, testTemporal } from '../testing/stack';
import { bundlePath } from '../testing/worker-fleet';
import * as hostileAgent from './support/hostile-agent';

const NOBODY = 65534;
let h: Harness;
let home: string;
let apiUrl: string;
let metricsPort: number;
const children: ChildProcess[] = [];

/** A directory `nobody` owns, only for it. */
function ownedByNobody(path: string): string {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  chownSync(path, NOBODY, NOBODY);
  return path;
}

/** `entry` as the service user, resolved once `ready` says so; rejected, with what it said, if it exits before. */
async function asServiceUser(entry: string, env: NodeJS.ProcessEnv, ready: (line: string) => boolean): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: REPO_ROOT,
    env,
    uid: NOBODY,
    gid: NOBODY,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const said: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => said.push(chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      said.push(line);
      if (ready(line)) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`${entry} exited (${code}) before it was ready:\n${said.join('\n')}`)),
    );
  });
}

beforeAll(async () => {
  h = await startHarness({}, { inProcessWorker: false });
  home = ownedByNobody(mkdtempSync('/tmp/tw-service-user-'));
  const data = ownedByNobody(join(home, 'data'));
  const databaseUrlFile = join(data, 'database-url');
  writeFileSync(databaseUrlFile, h.env.DATABASE_URL, { mode: 0o600 });
  chownSync(databaseUrlFile, NOBODY, NOBODY);
  const apiPort = await freePort();
  metricsPort = await freePort();
  apiUrl = `http://127.0.0.1:${apiPort}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...h.env,
    DATABASE_URL: undefined,
    DATABASE_URL_FILE: databaseUrlFile,
    HOME: home,
    TMPDIR: ownedByNobody(join(home, 'tmp')),
    TREEWARDEN_DATA_DIR: data,
    TREEWARDEN_API_PORT: String(apiPort),
    TREEWARDEN_API_URL: apiUrl,
    TREEWARDEN_WORKER_METRICS_PORT: String(metricsPort),
    TREEWARDEN_WORKFLOW_BUNDLE: await bundlePath(),
    LOG_LEVEL: 'info',
  };
  await asServiceUser('api/main.ts', env, (line) => line.includes(`listening at ${apiUrl}`));
  await asServiceUser('workers/main.ts', env, (line) => line.includes('"msg":"worker started"'));
}, 300_000);

afterAll(async () => {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((done) =>
          child.exitCode !== null || child.signalCode !== null
            ? done()
            : (child.once('exit', () => done()), child.kill('SIGTERM')),
        ),
    ),
  );
  await h?.close();
  if (home) rmSync(home, { recursive: true, force: true });
}, 120_000);

const call = (method: string, url: string, token: string, body?: unknown) => callApi(apiUrl, method, url, token, body);

const companyRunning = (name: string, script: string, env: Record<string, string> = {}) =>
  hostileAgent.companyWithRunningAgent(apiUrl, ADMIN_TOKEN, name, script, env);

test('the unprivileged worker says how it contains and confines runs', async () => {
  const health = await (await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).json();
  expect(health).toEqual({ state: 'RUNNING', containment: 'process-group', sandbox: { kind: 'namespaces' } });
});

test('a hostile agent of the service user finds no secret and no other token, and reaches nothing but the API', async () => {
  const runs = join(home, 'tmp', 'treewarden-runs');
  const victim = await companyRunning('victim', hostileAgent.VICTIM_AGENT);
  const victimRunToken = await hostileAgent.victimToken(join(runs, victim.runId));
  const scratch = ownedByNobody(join(home, 'hostile'));
  const database = new URL(h.env.DATABASE_URL);
  const targets: hostileAgent.HostileTargets = {
    DATA: join(home, 'data'),
    RUNS: runs,
    VICTIM: victim.runId,
    SCRATCH: scratch,
    TEMPORAL_PORT: testTemporal().temporalAddress.split(':').at(-1)!,
    PG_PORT: database.port,
    METRICS_PORT: String(metricsPort),
  };
  const hostile = await hostileAgent.hostileRun(apiUrl, ADMIN_TOKEN, targets, (runId) => runRow(h, runId));
  expect(hostile.settled).toMatchObject({ status: 'succeeded', exitCode: 0 });
  const seen = hostile.seen;
  const secrets = {
    adminToken: ADMIN_TOKEN,
    databaseUrl: h.env.DATABASE_URL,
    ...(database.password ? { databasePassword: decodeURIComponent(database.password) } : {}),
    victimRunToken,
    victimOwnerToken: (await runRow(h, victim.runId)).ownerToken!,
  };
  hostileAgent.expectConfined(seen, { secrets, targets, ownRunId: hostile.runId });
  expect(await h.services.db.comment.count({ where: { issueId: victim.issue.id } })).toBe(0);
  expect((await call('POST', `/api/work/${victim.runId}/stop`, victim.company.boardToken)).status).toBe(200);
}, 240_000);
