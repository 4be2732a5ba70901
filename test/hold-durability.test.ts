/**
 * @module Every hold gets its workflow (issue 44, item 2), with the processes users run: a separate API process whose
 * connection to Temporal is cut for the pause, and a worker that reaches Temporal. The pause commits its hold and
 * answers 503 naming it; the worker's dispatcher starts the hold's workflow, which stops the running task; once the
 * API reaches Temporal again the release resumes that task exactly once. A hold whose announcement nobody heard (its
 * API died before any worker listened) is started by the next worker to start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { freePort } from '../runtime/ports';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { REPO_ROOT } from '../testing/stack';
import { workerFleet, type WorkerFleet } from '../testing/worker-fleet';
import { startWedgeableProxy, type WedgeableProxy } from './support/wedgeable-proxy';

// each test stops and starts worker processes: 20 to 40 s alone, two to three times that beside a full run's
// heaviest files on the 2-core CI machine, past the default 120 s
jest.setTimeout(300_000);

let h: Harness;
let fleet: WorkerFleet;
let temporal: WedgeableProxy;
let api: ChildProcess | undefined;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_HOLD_DISPATCH_RETRY_MS: '500' });
  fleet = workerFleet(h);
  temporal = await startWedgeableProxy(`tcp://${h.env.TEMPORAL_ADDRESS}`);
});
afterAll(async () => {
  api?.kill('SIGKILL');
  await fleet?.close();
  await temporal?.close();
  await h?.close();
});

/** The API as its own process, reaching Temporal only through the proxy. */
async function apiThroughProxy(): Promise<(url: string, token: string, body: unknown) => Promise<Response>> {
  const port = await freePort();
  api = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...h.env, TEMPORAL_ADDRESS: temporal.address, TREEWARDEN_API_PORT: String(port) },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually('the API process answers', async () => (await fetch(`${url}/healthz`)).status === 200, 60_000);
  return (path, token, body) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
}

test('a pause whose API cannot reach Temporal: a worker applies its hold, and the release resumes the task once', async () => {
  const post = await apiThroughProxy();
  const c = await seedCompany(h);
  const parent = await c.issue({ title: 'paused without Temporal' });
  // the task's run blocks in its prepare step the first time only, so its resumed run passes straight through
  const marker = `/tmp/tw-hold-durability-${randomBytes(6).toString('hex')}`;
  const agent = await c.agent({
    type: 'process',
    command: 'true',
    prepare: { command: 'sh', args: ['-c', `test -f ${marker} && exit 0; touch ${marker}; sleep 120 & wait`] },
  });
  const task = await c.issue({ title: 'task', parentId: parent.id, assigneeAgentId: agent.id, status: 'in_progress' });
  expect((await h.request('POST', `/api/issues/${task.id}/wake`, c.token, {})).status).toBe(202);
  await eventually('the task running', async () => existsSync(marker), 60_000);
  const running = await h.services.db.run.findFirstOrThrow({ where: { issueId: task.id } });

  temporal.down();
  const pause = await post(`/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' });
  const refused = (await pause.json()) as { error: { code: string; message: string; details: { holdId: string } } };
  expect(pause.status).toBe(503);
  const { holdId } = refused.error.details;
  expect(refused.error.message).toContain(`hold ${holdId} is recorded`);

  // only the worker reaches Temporal: its dispatcher started the workflow, which applied the pause
  const hold = await eventually(
    'the hold applied by its workflow',
    async () => {
      const row = await h.services.db.treeHold.findUniqueOrThrow({ where: { id: holdId } });
      return row.appliedAt && row.workflowStartedAt ? row : null;
    },
    60_000,
  );
  expect(hold.status).toBe('active');
  await eventually(
    'the running task stopped by the hold',
    async () => {
      const run = await h.services.db.run.findUniqueOrThrow({ where: { id: running.id } });
      return run.status === 'cancelled' && run.stoppedByHoldId === holdId;
    },
    60_000,
  );

  temporal.up();
  const release = await eventually(
    'the release answered',
    async () => {
      const answer = await post(`/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {});
      return answer.status === 200 ? ((await answer.json()) as { resumed: { issueId: string }[] }) : null;
    },
    60_000,
  );
  expect(release.resumed.map((r) => r.issueId)).toEqual([task.id]);
  const resumed = await h.services.db.run.findMany({ where: { issueId: task.id, wakeReason: 'issue_tree_resumed' } });
  expect(resumed).toHaveLength(1);
  expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: running.id } })).toBe(1);
});

test('a hold whose announcement no worker heard is started by the next worker to start', async () => {
  const c = await seedCompany(h);
  const root = await c.issue({ title: 'announced to nobody' });
  // as a pause leaves it when its API dies after the commit while no worker listens: a row owing its workflow
  const hold = await h.services.db.treeHold.create({ data: { companyId: c.companyId, rootIssueId: root.id } });
  expect((await h.services.db.treeHold.findUniqueOrThrow({ where: { id: hold.id } })).appliedAt).toBeNull();

  const worker = await fleet.start();
  const applied = await eventually(
    'the hold applied',
    async () => (await h.services.db.treeHold.findUniqueOrThrow({ where: { id: hold.id } })).appliedAt,
    60_000,
  );
  expect(applied).toBeInstanceOf(Date);
  const released = await h.request('POST', `/api/issues/${root.id}/tree-holds/${hold.id}/release`, c.token, {});
  expect(released.status).toBe(200);
  await fleet.kill(worker);
});
