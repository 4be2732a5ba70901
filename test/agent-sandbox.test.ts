/**
 * @module The agent sandbox (issue 43) against a hostile agent, on the stack `npm start` builds (its own worker and
 * API processes, the embedded PostgreSQL, run as root like the README's), with the admin token given as a variable.
 * The agent looks where an attacker would: the data folder, every `/proc/<pid>/environ`, the other runs' folders,
 * the internal ports (the Temporal frontend, PostgreSQL, the worker's metrics), directly and through the proxy; then
 * a child of it tries again after `setsid`, `unshare`, `nsenter`, a new `/proc` and every setuid binary. It finds
 * no secret and no other run's token, every connection but the API's fails, and the API still works with its own
 * token. A second company's run is running meanwhile: its token is the one an attacker wants.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../runtime/ports';
import { eventually } from '../testing/harness';
import { callApi, embeddedDatabaseUrl, stackSql, startServiceStack, type ServiceStack } from '../testing/service-stack';
import { testTemporal } from '../testing/stack';
import { runFiles, runFilesRoot } from '../runs/run-files';
import {
  companyWithRunningAgent,
  expectConfined,
  hostileRun,
  VICTIM_AGENT,
  victimToken,
  type HostileTargets,
} from './support/hostile-agent';

const ADMIN_TOKEN = `twa_${randomBytes(24).toString('base64url')}`;
let stack: ServiceStack;
let metricsPort: number;
let scratch: string;

beforeAll(async () => {
  metricsPort = await freePort();
  scratch = mkdtempSync(join(tmpdir(), 'tw-hostile-'));
  stack = await startServiceStack({
    temporalAddress: testTemporal().temporalAddress,
    env: { TREEWARDEN_ADMIN_TOKEN: ADMIN_TOKEN, TREEWARDEN_WORKER_METRICS_PORT: String(metricsPort) },
  });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(scratch, { recursive: true, force: true });
}, 120_000);

const call = (method: string, url: string, token: string, body?: unknown) =>
  callApi(stack.apiUrl, method, url, token, body);

const companyRunning = (name: string, script: string, env: Record<string, string> = {}) =>
  companyWithRunningAgent(stack.apiUrl, ADMIN_TOKEN, name, script, env);

const runOf = async (runId: string) =>
  (
    await stackSql<{ status: string; ownerToken: string | null; exitCode: number | null }>(
      stack,
      'SELECT status, "ownerToken", "exitCode" FROM "Run" WHERE id = $1',
      [runId],
    )
  )[0];

test('a hostile agent on the npm start stack finds no secret and no other token, and reaches nothing but the API', async () => {
  const victim = await companyRunning('victim', VICTIM_AGENT);
  const victimRunToken = await victimToken(runFiles(victim.runId, null).runDir);
  const database = new URL(embeddedDatabaseUrl(stack));
  const targets: HostileTargets = {
    DATA: stack.dataDir,
    RUNS: runFilesRoot(),
    VICTIM: victim.runId,
    SCRATCH: scratch,
    TEMPORAL_PORT: testTemporal().temporalAddress.split(':').at(-1)!,
    PG_PORT: database.port,
    METRICS_PORT: String(metricsPort),
  };
  const hostile = await hostileRun(stack.apiUrl, ADMIN_TOKEN, targets, runOf);
  expect(hostile.settled).toMatchObject({ status: 'succeeded', exitCode: 0 });
  const seen = hostile.seen;
  const demo = JSON.parse(readFileSync(join(stack.dataDir, 'demo.json'), 'utf8')) as { boardToken: string };
  const secrets = {
    adminToken: ADMIN_TOKEN,
    databasePassword: decodeURIComponent(database.password),
    demoBoardToken: demo.boardToken,
    victimRunToken,
    victimOwnerToken: (await runOf(victim.runId)).ownerToken!,
  };
  expectConfined(seen, { secrets, targets, ownRunId: hostile.runId });
  // nothing it did reached the victim's company
  expect(await stackSql(stack, 'SELECT id FROM "Comment" WHERE "issueId" = $1', [victim.issue.id])).toEqual([]);
  expect((await runOf(victim.runId)).status).toBe('running');
  expect((await call('POST', `/api/work/${victim.runId}/stop`, victim.company.boardToken)).status).toBe(200);
}, 240_000);
