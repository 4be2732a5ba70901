/**
 * @module Watchdog modes (issue 29, item 5): an observe-mode watchdog records and notifies each new stop once and
 * wakes nobody (no review task, no wake, no run); switched to review mode, it wakes its agent for the stop then
 * current. Against the real stack: the watchdog's workflow, its evaluations and the database.
 */
import { workflowId } from '../domain/ids';
import { subtreeChangedSignal, watchdogStateQuery } from '../workflows/definitions';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
});
afterAll(async () => {
  await h?.close();
});

const state = (issueId: string) =>
  h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).query(watchdogStateQuery);

test('observe mode records and notifies a new stop once, wakes nobody, and review mode then wakes for it', async () => {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const root = await c.issue({ title: 'observed tree' });
  await c.issue({ title: 'leaf', parentId: root.id, status: 'done' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
    agentId: watcher.id,
    mode: 'observe',
  });
  expect(put.status).toBe(201);
  expect(put.body.mode).toBe('observe');
  const watchdogId = put.body.id as string;
  await eventually('the stop observed', async () => (await state(root.id)).lastEvaluation?.state === 'observed');
  // evaluated again for the same stop: still recorded once
  const before = (await state(root.id)).evaluations;
  await h.services.client.workflow
    .getHandle(workflowId.taskWatchdog(root.id))
    .signal(subtreeChangedSignal, { watchdogId, reason: 'nudge' });
  await eventually('evaluated again', async () => (await state(root.id)).evaluations > before);
  const db = h.services.db;
  const triggered = await db.activityLog.findMany({
    where: { action: 'issue.task_watchdog_triggered', entityId: root.id },
  });
  expect(triggered).toHaveLength(1);
  expect(triggered[0].details).toMatchObject({ mode: 'observe', watchdogId, reviewIssueId: null });
  const observedFingerprint = (triggered[0].details as { stopFingerprint: string }).stopFingerprint;
  const notifications = await db.notification.findMany({ where: { subject: `task-watchdog:${watchdogId}` } });
  expect(notifications.map((n) => n.kind)).toEqual(['watchdog_stopped']);
  // nobody woken: no review task, no wake, no run
  expect(await db.issue.count({ where: { originKind: 'task_watchdog', originId: root.id } })).toBe(0);
  expect(await db.wakeRequest.count({ where: { companyId: c.companyId } })).toBe(0);
  expect(await db.run.count({ where: { companyId: c.companyId } })).toBe(0);
  expect((await h.request('GET', `/api/issues/${root.id}/watchdog`, c.token)).body).toMatchObject({
    mode: 'observe',
    triggerCount: 1,
    lastObservedFingerprint: observedFingerprint,
  });

  // a PUT without a mode (the console's form before it showed one) keeps observe mode: nobody is woken
  const edited = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
    agentId: watcher.id,
    instructions: 'check the release notes',
  });
  expect([edited.status, edited.body.mode]).toEqual([200, 'observe']);
  await eventually('the edited stop observed', async () => {
    const last = (await state(root.id)).lastEvaluation;
    return last?.state === 'observed' && last.fingerprint !== observedFingerprint ? last : null;
  });
  expect(await db.wakeRequest.count({ where: { companyId: c.companyId } })).toBe(0);

  // review mode: the same stop was never reviewed, so the agent is woken for it
  const review = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
    agentId: watcher.id,
    mode: 'review',
  });
  expect([review.status, review.body.mode]).toEqual([200, 'review']);
  await eventually('the review wake', async () =>
    (await db.wakeRequest.count({ where: { reviewWatchdogId: watchdogId } })) === 1 ? true : null,
  );
});

test('an unknown mode is a 400 naming the field, and writes nothing', async () => {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const root = await c.issue({ title: 'not watched' });
  const r = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id, mode: 'audit' });
  expect(r.status).toBe(400);
  expect(r.body.error.message).toContain('mode');
  expect(await h.services.db.watchdog.count({ where: { issueId: root.id } })).toBe(0);
});
