/**
 * @module Versioned rollouts (issue 27), the procedure of docs/fleet.md step by step with real worker processes
 * (workers/main.ts) and the CLI: build 1 serves a run, a watchdog and a hold; build 2 starts beside it and is
 * promoted; the run started on build 1 finishes there (PINNED) while new runs start on build 2; the watchdog and the
 * hold move to build 2 (AUTO_UPGRADE) with their state: a release resumes exactly the interrupted run once, and the
 * watchdog wakes once for a new stop; `rollout wait-drained` says when build 1 may go, and stopping it loses nothing.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowId } from '../domain/ids';
import { eventually, runRow, seedCompany, settled, startHarness, type Harness } from '../testing/harness';
import { QUIET_BUNDLER_LOG } from '../testing/stack';
import { holdInterruptsRun } from '../testing/scenarios';
import { bundlePath, workerFleet, workerRunning, type WorkerFleet } from '../testing/worker-fleet';
import { rolloutStatus, type RolloutStatus } from '../temporal/rollout';
import { BLOCKED } from './support/blocked';

let h: Harness;
let fleet: WorkerFleet;
let dir: string;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' }, { inProcessWorker: false });
  fleet = workerFleet(h);
  dir = mkdtempSync(join(tmpdir(), 'treewarden-rollout-'));
});
afterAll(async () => {
  await fleet?.close();
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `treewarden rollout …` as an operator runs it, with the stack's Temporal settings */
function rollout(...args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      ['node_modules/.bin/tsx', 'cli/index.ts', 'rollout', ...args, '--json'],
      { cwd: resolve(__dirname, '..'), env: { ...process.env, ...h.env }, timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

/** `treewarden rollout status`, as the operator reads it */
const statusByCli = async () => JSON.parse((await rollout('status')).stdout) as RolloutStatus;
/** the same answer in-process, for the waits: a CLI process per poll cost seconds each on a loaded host */
const status = () => rolloutStatus(h.services.client, h.env.TREEWARDEN_DEPLOYMENT_NAME);

/** the build an execution's next workflow task goes to, and whether it is pinned there */
async function versioningOf(client: Client, id: string) {
  const described = await client.workflow.getHandle(id).describe();
  const info = described.raw.workflowExecutionInfo?.versioningInfo;
  // temporal.api.enums.v1.VersioningBehavior
  const behavior = ['unspecified', 'pinned', 'auto-upgrade'][Number(info?.behavior ?? 0)];
  return { buildId: info?.deploymentVersion?.buildId ?? null, behavior };
}

test('build 2 takes over from build 1 by the docs/fleet.md procedure, losing and repeating nothing', async () => {
  const client = h.services.client;
  const build1 = await fleet.start({ TREEWARDEN_BUILD_ID: 'build-1' });
  await eventually('the first build current by itself', async () => (await status()).currentBuildId === 'build-1');
  const c = await seedCompany(h);

  // on build 1: a run gated by a file, a watchdog that has reviewed one stop, a hold that interrupted a run
  const gate = join(dir, 'gate');
  const log = join(dir, 'run.log');
  const gated = await c.agent({
    type: 'process',
    command: 'sh',
    args: [
      '-c',
      'echo started >> "$1"; while [ ! -e "$2" ]; do sleep 0.2; done; echo finished >> "$1"',
      'sh',
      log,
      gate,
    ],
  });
  const gatedIssue = await c.issue({ title: 'long agent', assigneeAgentId: gated.id });
  const oldRunId = (await h.request('POST', `/api/issues/${gatedIssue.id}/wake`, c.token, {})).body.runId as string;
  await eventually('the run started on build 1', () =>
    workerRunning(client, workflowId.agentRun(oldRunId), 'executeRun'),
  );
  const watcher = await c.agent();
  const root = await c.issue({ title: 'watched' });
  const leaf = await c.issue({ title: 'leaf', parentId: root.id, status: 'done' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  const watchdogWakes = () =>
    h.services.db.wakeRequest.count({ where: { idempotencyKey: { startsWith: `task_watchdog:${put.body.id}:` } } });
  await eventually('the watchdog woke once on build 1', async () => (await watchdogWakes()) === 1);
  const hold = await holdInterruptsRun(h, c, { release: false });
  for (const id of [workflowId.taskWatchdog(root.id), hold.holdWorkflowId]) {
    expect(await versioningOf(client, id)).toEqual({ buildId: 'build-1', behavior: 'auto-upgrade' });
  }
  expect(await versioningOf(client, workflowId.agentRun(oldRunId))).toEqual({ buildId: 'build-1', behavior: 'pinned' });

  // the procedure: the new build's code replays what it takes over (an unpatched change is refused), then it starts
  // beside build 1 and is promoted
  // (what it takes over: the watchdog, the hold, and the liveness watch the issues created above started)
  expect(await versioningOf(client, workflowId.livenessWatch(h.env.TREEWARDEN_TASK_QUEUE))).toEqual({
    buildId: 'build-1',
    behavior: 'auto-upgrade',
  });
  const checked = await rollout('check-replay', '--bundle', await bundlePath());
  expect([checked.code, JSON.parse(checked.stdout)]).toEqual([0, { replayed: 3, failures: [] }]);
  const incompatible = join(dir, 'unpatched-hold.js');
  writeFileSync(
    incompatible,
    (
      await bundleWorkflowCode({
        workflowsPath: require.resolve('./fixtures/unpatched-hold'),
        logger: QUIET_BUNDLER_LOG,
      })
    ).code,
  );
  const refused = await rollout('check-replay', '--bundle', incompatible);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`1 of 3 running execution(s) do not replay`);
  expect(refused.stderr).toContain(hold.holdWorkflowId);
  const build2 = await fleet.start({ TREEWARDEN_BUILD_ID: 'build-2' });
  await eventually('build 2 registered with its workers', async () =>
    (await status()).builds.find((b) => b.buildId === 'build-2' && b.workers.length > 0),
  );
  expect((await status()).currentBuildId).toBe('build-1'); // a second build never promotes itself
  const promoted = await rollout('promote', 'build-2');
  expect([promoted.code, promoted.stderr]).toEqual([0, '']);
  const during = await statusByCli();
  expect(during.currentBuildId).toBe('build-2');
  const old = during.builds.find((b) => b.buildId === 'build-1')!;
  expect(old.pinnedRunning).toBeGreaterThanOrEqual(1); // the gated run
  expect(old.workers.map((w) => w.identity)).toContain(build1.identity);

  // new runs start on build 2; the one started on build 1 stays pinned there
  const fresh = await c.issue({ title: 'after the switch', assigneeAgentId: (await c.agent()).id });
  const newRunId = (await h.request('POST', `/api/issues/${fresh.id}/wake`, c.token, {})).body.runId as string;
  expect((await settled(h, newRunId)).status).toBe('succeeded');
  expect(await versioningOf(client, workflowId.agentRun(newRunId))).toMatchObject({ buildId: 'build-2' });
  expect(await versioningOf(client, workflowId.agentRun(oldRunId))).toEqual({
    buildId: 'build-1',
    behavior: 'pinned',
  });

  // the hold moves to build 2 at its next task and still knows what its pause interrupted
  const holdId = hold.holdWorkflowId.replace('tree-hold:', '');
  const released = await h.request('POST', `/api/issues/${hold.issueId}/tree-holds/${holdId}/release`, c.token, {});
  expect(released.status).toBe(200);
  expect(released.body.resumed).toHaveLength(1);
  expect((await settled(h, released.body.resumed[0].runId as string)).status).toBe('succeeded');
  expect((await versioningOf(client, hold.holdWorkflowId)).buildId).toBe('build-2');
  const again = await h.request('POST', `/api/issues/${hold.issueId}/tree-holds/${holdId}/release`, c.token, {});
  expect(again.status).toBe(409);

  // the watchdog moves too, with its reviewed stop: a new stop wakes once more, nothing else does
  expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED)).status).toBe(200);
  await eventually('one wake for the new stop', async () => (await watchdogWakes()) === 2);
  // the wake is written inside the workflow task (a local activity); the execution's build is recorded at its end
  await eventually(
    "the watchdog's task completed on build 2",
    async () => (await versioningOf(client, workflowId.taskWatchdog(root.id))).buildId === 'build-2',
  );

  // build 1 may go once nothing pinned to it runs: the gated run finishes there, with its own output
  const waiting = rollout('wait-drained', 'build-1', '--timeout', '120000');
  writeFileSync(gate, '');
  expect((await settled(h, oldRunId)).status).toBe('succeeded');
  expect((await waiting).code).toBe(0);
  expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).toEqual(['started', 'finished']);
  expect(await fleet.stop(build1)).toBe(0);

  // nothing was lost with build 1: build 2 alone serves a new run and the watchdog
  const last = await c.issue({ title: 'after build 1 left', assigneeAgentId: (await c.agent()).id });
  const lastRunId = (await h.request('POST', `/api/issues/${last.id}/wake`, c.token, {})).body.runId as string;
  expect((await settled(h, lastRunId)).status).toBe('succeeded');
  expect((await runRow(h, oldRunId)).status).toBe('succeeded');
  expect(await watchdogWakes()).toBe(2);
  expect(existsSync(log)).toBe(true);
  expect(fleet.workers.map((w) => w.pid)).toEqual([build2.pid]);
  // two worker processes, a dozen runs and five CLI calls: about 70 s alone, past 120 s beside a full run's heaviest files
}, 300_000);
