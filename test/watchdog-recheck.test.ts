/**
 * @module Conditional acceptance with re-check and a repeat limit (issue 29, item 1), against the real stack: a review
 * that accepts its stop only for a few seconds (`recheckAfter`) gets the same stop re-checked on a workflow timer the
 * Temporal UI names, its agent woken once more (`:recheck:1`); once the repeat limit is spent the watchdog wakes
 * nobody and escalates once: one human-only interaction on the watched issue and one `watchdog_escalated`
 * notification. Refusals of `recheckAfter` are 422s that write nothing.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { workflowId } from '../domain/ids';
import { subtreeChangedSignal, watchdogStateQuery } from '../workflows/definitions';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';

const ACCEPTED_FOR_MS = 3_000;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
});
afterAll(async () => {
  await h?.close();
});

const watchdogState = (issueId: string) =>
  h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).query(watchdogStateQuery);
const watchdogWakes = (watchdogId: string) =>
  h.services.db.wakeRequest.findMany({
    where: { idempotencyKey: { startsWith: `task_watchdog:${watchdogId}:` } },
    orderBy: { createdAt: 'asc' },
  });

/** A review agent that accepts its stop only until a few seconds from now, and notes each of its runs in `dir`. */
function acceptingReviewer(dir: string): string {
  const path = join(dir, 'reviewer.js');
  writeFileSync(
    path,
    `const fs = require('node:fs');
fs.writeFileSync(${JSON.stringify(dir)} + '/run-' + process.env.TREEWARDEN_RUN_ID, '');
const recheckAfter = new Date(Date.now() + ${ACCEPTED_FOR_MS}).toISOString();
fetch(process.env.TREEWARDEN_API_URL + '/api/issues/' + process.env.TREEWARDEN_ISSUE_ID, {
  method: 'PATCH',
  headers: { authorization: 'Bearer ' + process.env.TREEWARDEN_RUN_TOKEN, 'content-type': 'application/json' },
  body: JSON.stringify({ status: 'done', recheckAfter, comment: 'accepted for now: the vendor answers soon' }),
}).then((r) => process.exit(r.ok ? 0 : 1));
`,
  );
  return path;
}

/** The summaries of the watchdog workflow's timers, as the Temporal UI shows them. */
async function timerSummaries(issueId: string): Promise<string[]> {
  const history = await h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).fetchHistory();
  return (history.events ?? []).flatMap((e) =>
    e.timerStartedEventAttributes && e.userMetadata?.summary
      ? [defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary)]
      : [],
  );
}

test('a conditionally accepted stop is re-checked on its timer, then escalated once the repeat limit is spent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tw-recheck-'));
  const c = await seedCompany(h);
  const root = await c.issue({ title: 'vendor integration' });
  await c.issue({ title: 'wait for the vendor', parentId: root.id, status: 'done' });
  const reviewer = await c.agent({ type: 'process', command: process.execPath, args: [acceptingReviewer(dir)] });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
    agentId: reviewer.id,
    repeatLimit: 1,
  });
  expect([put.status, put.body.repeatLimit]).toEqual([201, 1]);
  const watchdogId: string = put.body.id;

  // the first review accepts until a few seconds from now: the workflow waits for that re-check on a named timer
  const accepted = await eventually('the first conditional acceptance', async () => {
    const last = (await watchdogState(root.id)).lastEvaluation;
    return last?.state === 'already_reviewed' && last.recheckAt ? last : null;
  });
  expect((await watchdogWakes(watchdogId)).map((w) => w.idempotencyKey)).toEqual([
    `task_watchdog:${watchdogId}:${accepted.fingerprint}`,
  ]);
  await eventually('a timer naming the re-check', async () =>
    (await timerSummaries(root.id)).some((s) => s.includes(`re-check at ${accepted.recheckAt}`)),
  );

  // nothing else writes: only that timer gets the same stop re-checked, waking the agent once more
  const rechecked = await eventually('the re-check wake', async () => {
    const wakes = await watchdogWakes(watchdogId);
    return wakes.length === 2 ? wakes[1] : null;
  });
  expect(rechecked.idempotencyKey).toBe(`task_watchdog:${watchdogId}:${accepted.fingerprint}:recheck:1`);
  expect(rechecked.createdAt.getTime()).toBeGreaterThanOrEqual(Date.parse(accepted.recheckAt!));

  // the second review accepts conditionally again: the limit is spent, so its re-check escalates instead
  const escalated = await eventually(
    'the escalation',
    async () => ((await watchdogState(root.id)).lastEvaluation?.state === 'escalated' ? true : null),
    60_000,
  );
  expect(escalated).toBe(true);
  const db = h.services.db;
  const interactions = await db.interaction.findMany({ where: { issueId: root.id } });
  expect(interactions).toEqual([
    expect.objectContaining({ audience: 'human_only', createdByKind: 'system', status: 'pending' }),
  ]);
  const notifications = await db.notification.findMany({
    where: { subject: `task-watchdog:${watchdogId}`, kind: 'watchdog_escalated' },
  });
  expect(notifications).toHaveLength(1);
  expect(notifications[0].payload).toMatchObject({ data: { interactionId: interactions[0].id, rechecks: 1 } });
  const audit = await db.activityLog.findMany({
    where: { entityId: root.id, action: { in: ['issue.task_watchdog_rechecked', 'issue.task_watchdog_escalated'] } },
    orderBy: { createdAt: 'asc' },
  });
  expect(audit.map((a) => a.action)).toEqual(['issue.task_watchdog_rechecked', 'issue.task_watchdog_escalated']);

  // evaluated again (the escalation's interaction is no new stop): still escalated, nobody woken a third time
  const before = (await watchdogState(root.id)).evaluations;
  await h.services.client.workflow
    .getHandle(workflowId.taskWatchdog(root.id))
    .signal(subtreeChangedSignal, { watchdogId, reason: 'nudge' });
  const again = await eventually('evaluated again', async () => {
    const state = await watchdogState(root.id);
    return state.evaluations > before ? state.lastEvaluation : null;
  });
  expect([again?.state, again?.fingerprint]).toEqual(['escalated', accepted.fingerprint]);
  expect(await watchdogWakes(watchdogId)).toHaveLength(2);
  expect(readdirSync(dir).filter((f) => f.startsWith('run-'))).toHaveLength(2);
  expect(await db.interaction.count({ where: { issueId: root.id } })).toBe(1);
  expect(await db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } })).toMatchObject({
    recheckCount: 1,
    acceptedUntil: null,
    escalatedFingerprint: accepted.fingerprint,
  });
});

test('recheckAfter is a 422 off a review disposition, or out of bounds, and writes nothing', async () => {
  const c = await seedCompany(h);
  const issue = await c.issue({ title: 'not a review task' });
  const soon = new Date(Date.now() + 60_000).toISOString();
  const plain = await h.request('PATCH', `/api/issues/${issue.id}`, c.token, { status: 'done', recheckAfter: soon });
  expect(plain.status).toBe(422);
  expect(plain.body.error.message).toContain('recheckAfter');
  expect((await h.services.db.issue.findUniqueOrThrow({ where: { id: issue.id } })).status).toBe('todo');
  const malformed = await h.request('PATCH', `/api/issues/${issue.id}`, c.token, { recheckAfter: 'tomorrow' });
  expect(malformed.status).toBe(400);
  expect(malformed.body.error.message).toContain('recheckAfter');

  // on a review task: in the past, under a second ahead, past 90 days ahead
  const root = await c.issue({ title: 'watched for the bounds' });
  await c.issue({ title: 'stopped leaf', parentId: root.id, status: 'done' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: (await c.agent()).id });
  expect(put.status).toBe(201);
  const review = await eventually('the review task', () =>
    h.services.db.issue.findFirst({ where: { originKind: 'task_watchdog', originId: root.id } }),
  );
  await eventually('the review run settled', async () =>
    (await h.services.db.run.findFirst({ where: { reviewWatchdogId: put.body.id } }))?.finishedAt ? true : null,
  );
  const before = await h.services.db.issue.findUniqueOrThrow({ where: { id: review.id } });
  const DAY_MS = 24 * 60 * 60_000;
  for (const [aheadMs, refusal] of [
    [-60_000, 'at least 1 second'],
    [100, 'at least 1 second'],
    [91 * DAY_MS, 'at most 90 days'],
  ] as const) {
    const recheckAfter = new Date(Date.now() + aheadMs).toISOString();
    const refused = await h.request('PATCH', `/api/issues/${review.id}`, c.token, { status: 'done', recheckAfter });
    expect([refused.status, refused.body.error.message]).toEqual([422, expect.stringContaining(refusal)]);
  }
  expect((await h.services.db.issue.findUniqueOrThrow({ where: { id: review.id } })).status).toBe(before.status);
  expect(await h.services.db.watchdog.findUniqueOrThrow({ where: { id: put.body.id } })).toMatchObject({
    acceptedUntil: null,
    recheckCount: 0,
  });
});
