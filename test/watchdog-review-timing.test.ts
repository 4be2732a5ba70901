/**
 * @module Task watchdog timing against the real stack: the end of a first-run grace is re-checked
 * by the workflow itself (not left to the 10-minute safety tick), and only one review run is ever
 * live: a burst of material changes during a really running review gives exactly one further review.
 *
 * The grace timer runs on the real dev server with a 3 s grace: the SDK's time-skipping test server
 * cannot be downloaded on these machines (docs: temporal-toolchain.md §1.5). The assertions are on
 * behaviour (a wake happens with no other trigger), never on how long anything took.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workflowId } from '../domain/ids';
import { watchdogStateQuery } from '../workflows/definitions';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { BLOCKED, moveTo } from './support/blocked';

const GRACE_MS = 3_000;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: String(GRACE_MS) });
});
afterAll(async () => {
  await h?.close();
});

const watchdogWakes = (watchdogId: string) =>
  h.services.db.wakeRequest.findMany({
    where: { idempotencyKey: { startsWith: `task_watchdog:${watchdogId}:` } },
    orderBy: { createdAt: 'asc' },
  });
const watchdogState = (issueId: string) =>
  h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).query(watchdogStateQuery);

test('a leaf assigned and never woken is reviewed when its first-run grace ends, with no other change', async () => {
  const c = await seedCompany(h);
  const worker = await c.agent();
  const watcher = await c.agent();
  const root = await c.issue({ title: 'ship feature' });
  await c.issue({ title: 'write code', parentId: root.id, assigneeAgentId: worker.id });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  expect(put.status).toBe(201);
  const watchdogId: string = put.body.id;
  const pending = await eventually('an evaluation inside the grace', async () => {
    const last = (await watchdogState(root.id)).lastEvaluation;
    return last?.state === 'pending_first_run' ? last : null;
  });
  expect(pending.recheckAt).toBeDefined();
  expect(await watchdogWakes(watchdogId)).toHaveLength(0);
  // nothing writes any more: only the workflow's own grace timer can get it evaluated again
  const woken = await eventually('the review wake after the grace', async () => {
    const wakes = await watchdogWakes(watchdogId);
    return wakes.length > 0 ? wakes : null;
  });
  expect(woken).toHaveLength(1);
  // the wake is written inside the evaluation, before the workflow records its result
  await eventually(
    'the evaluation after the grace',
    async () => (await watchdogState(root.id)).lastEvaluation?.state === 'stopped',
  );
});

/**
 * A watchdog agent that really runs: on its first review it reopens the leaf (a restoring write of
 * its own), then waits for the test's release file before moving its review task to done. Later
 * reviews move it to done at once.
 */
function reviewAgentScript(dir: string, leafId: string): string {
  const path = join(dir, 'review-agent.js');
  writeFileSync(
    path,
    `const fs = require('node:fs');
const path = require('node:path');
const dir = ${JSON.stringify(dir)};
const api = (method, url, body) => fetch(process.env.TREEWARDEN_API_URL + url, {
  method, headers: { authorization: 'Bearer ' + process.env.TREEWARDEN_RUN_TOKEN, 'content-type': 'application/json' }, body: JSON.stringify(body),
}).then(async (r) => { if (!r.ok) throw new Error(method + ' ' + url + ': ' + r.status + ' ' + await r.text()); });
(async () => {
  const first = fs.readdirSync(dir).filter((f) => f.startsWith('run-')).length === 0;
  fs.writeFileSync(path.join(dir, 'run-' + process.env.TREEWARDEN_RUN_ID), '');
  if (first) {
    await api('PATCH', '/api/issues/${leafId}', { status: 'todo', comment: 'reopened: the tests were never run' });
    while (!fs.existsSync(path.join(dir, 'release'))) await new Promise((r) => setTimeout(r, 100));
  }
  await api('PATCH', '/api/issues/' + process.env.TREEWARDEN_ISSUE_ID, { status: 'done', comment: 'reviewed' });
})().catch((e) => { fs.appendFileSync(path.join(dir, 'errors.log'), String(e) + '\\n'); process.exit(1); });
`,
  );
  return path;
}

test('a burst of material changes during a live review run gives exactly one further review after it ends', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tw-review-'));
  const c = await seedCompany(h);
  const root = await c.issue({ title: 'ship feature' });
  const leaf = await c.issue({ title: 'write code', parentId: root.id, status: 'done' });
  const watcher = await c.agent({
    type: 'process',
    command: process.execPath,
    args: [reviewAgentScript(dir, leaf.id)],
  });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  const watchdogId: string = put.body.id;

  // the first review is really running, and has already made its own restoring write
  await eventually('the first review run is running', async () => readdirSync(dir).some((f) => f.startsWith('run-')));
  const reviewIssueId = (await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } })).reviewIssueId!;
  await eventually('the reopened leaf', async () => {
    if (existsSync(join(dir, 'errors.log'))) throw new Error(readFileSync(join(dir, 'errors.log'), 'utf8'));
    return (await h.services.db.issue.findUniqueOrThrow({ where: { id: leaf.id } })).status === 'todo';
  });

  // a burst of material changes while that review is live
  for (const status of ['blocked', 'in_review', 'blocked'] as const) {
    expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, moveTo(status))).status).toBe(200);
  }
  await c.issue({ title: 'also document it', parentId: root.id, ...BLOCKED });
  const deferred = await eventually('an evaluation after the whole burst', async () => {
    const state = await watchdogState(root.id);
    const evaluatedAt = state.lastEvaluation ? new Date(state.lastEvaluation.evaluatedAt) : null;
    const lastWrite = await h.services.db.activityLog.findFirstOrThrow({
      orderBy: { createdAt: 'desc' },
      where: { entityType: 'issue', action: { in: ['issue.updated', 'issue.created'] } },
    });
    return evaluatedAt && evaluatedAt > lastWrite.createdAt && state.pendingChanges === 0 ? state.lastEvaluation : null;
  });
  expect(deferred.state).toBe('review_running');
  expect(await watchdogWakes(watchdogId)).toHaveLength(1);
  expect(await h.services.db.run.count({ where: { issueId: reviewIssueId } })).toBe(1);

  // the review ends: one re-evaluation, one further review of the stop it never saw, and no more
  writeFileSync(join(dir, 'release'), '');
  const settled = await eventually(
    'the second review reviewed',
    async () => {
      const state = await watchdogState(root.id);
      const live = await h.services.db.run.count({
        where: { issueId: reviewIssueId, status: { in: ['queued', 'running'] } },
      });
      return state.lastEvaluation?.state === 'already_reviewed' && live === 0 && state.pendingChanges === 0
        ? state
        : null;
    },
    60_000,
  );
  const wakes = await watchdogWakes(watchdogId);
  expect(wakes).toHaveLength(2);
  expect(await h.services.db.run.count({ where: { issueId: reviewIssueId } })).toBe(2);
  expect(wakes[1].reviewFingerprint).toBe(deferred.fingerprint);
  const row = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } });
  expect(row.lastReviewedFingerprint).toBe(deferred.fingerprint);
  expect(settled.lastEvaluation?.fingerprint).toBe(deferred.fingerprint);
});
