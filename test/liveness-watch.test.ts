/**
 * @module Liveness recovery, event-driven (issue 44, item 5): on a stack with a stall threshold of three seconds and
 * no safety schedule, a run that ends leaving its issue in progress with no live path tells the `liveness-watch`
 * workflow, whose timer brings the pass that recovers the stall once it falls due; once the recovery's own run has
 * ended without restoring a path, the next pass stands down. An issue that still has a live path is left alone.
 */
import { livenessScheduleId } from '../liveness/schedule';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { livenessWatchRecovers } from '../testing/recovery-scenarios';

const STALL_MS = 3_000;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_LIVENESS_STALL_MS: String(STALL_MS) });
});
afterAll(async () => {
  await h?.close();
});

test('a run that leaves its issue with no live path is recovered when the stall falls due, once, with no scan', async () => {
  const c = await seedCompany(h);
  // an issue beside it with a live path the whole time: a monitor a day ahead
  const waiting = await c.issue({
    title: 'checked tomorrow',
    assigneeAgentId: (await c.agent()).id,
    status: 'in_progress',
  });
  const at = new Date(Date.now() + 86_400_000).toISOString();
  expect((await h.request('PUT', `/api/issues/${waiting.id}/monitor`, c.token, { at, note: 'later' })).status).toBe(
    201,
  );

  const { issueId, workflowId, executions } = await livenessWatchRecovers(h, c);

  // no schedule scanned: the watch's own passes did it
  await expect(
    h.services.client.schedule.getHandle(livenessScheduleId(h.env.TREEWARDEN_TASK_QUEUE)).describe(),
  ).rejects.toThrow();
  const totals = executions.reduce(
    (sum, { result }) => ({ recovered: sum.recovered + result.recovered, stoodDown: sum.stoodDown + result.stoodDown }),
    { recovered: 0, stoodDown: 0 },
  );
  expect(totals).toEqual({ recovered: 1, stoodDown: 1 });
  const runs = await h.services.db.run.findMany({ where: { issueId }, orderBy: { createdAt: 'asc' } });
  expect(runs.map((r) => [r.wakeReason, r.status])).toEqual([
    ['manual_wake', 'succeeded'],
    ['liveness_recovery', 'succeeded'],
  ]);
  const [recovery] = await h.services.db.livenessRecovery.findMany({ where: { issueId } });
  expect(recovery).toMatchObject({ stallKey: `after-run:${runs[0].id}`, latestRunId: runs[0].id });
  // recovered once it fell due: idle for the threshold after the first run ended, by the database's clock
  expect(recovery.stalledForMs).toBeGreaterThanOrEqual(STALL_MS);
  expect(await h.services.db.livenessRecovery.count({ where: { issueId: waiting.id } })).toBe(0);

  // the Temporal UI shows the wait: each execution's history has the timer it waited on
  const history = await h.services.client.workflow.getHandle(workflowId, executions[0].runId).fetchHistory();
  expect(history.events?.some((e) => e.timerStartedEventAttributes)).toBe(true);
});

test('an issue a person moves to in progress, with no run, is recovered when it stalls', async () => {
  const c = await seedCompany(h);
  const issue = await c.issue({ title: 'not started yet', assigneeAgentId: (await c.agent()).id, status: 'todo' });
  expect((await h.request('PATCH', `/api/issues/${issue.id}`, c.token, { status: 'in_progress' })).status).toBe(200);
  const recovery = await eventually('the recovery of the issue left in progress', () =>
    h.services.db.livenessRecovery.findFirst({ where: { issueId: issue.id } }),
  );
  expect(recovery).toMatchObject({ stallKey: 'never-run', latestRunId: null });
  expect(recovery.stalledForMs).toBeGreaterThanOrEqual(STALL_MS);
  expect(await h.services.db.wakeRequest.count({ where: { issueId: issue.id, reason: 'liveness_recovery' } })).toBe(1);
});
