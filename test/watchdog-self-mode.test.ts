/**
 * @module Self-mode watchdogs (issue 29, item 2; Paperclip #10399): a new stop wakes each stopped leaf's own assignee
 * on that leaf, once per leaf and stop, with the review context (no review task, the watchdog's agent not woken); the
 * run acts under the review contract scoped to its leaf's subtree, and loses it when the watchdog leaves self mode.
 * Against the real stack, with real agent processes and their run tokens.
 */
import { workflowId } from '../domain/ids';
import { subtreeChangedSignal, watchdogStateQuery } from '../workflows/definitions';
import { isTerminalRunStatus } from '../domain/statuses';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { recordingAgent } from './support/recording-agent';

let h: Harness;
beforeAll(async () => {
  // the leaves' agents ignore SIGTERM: a revoked verification stays live (stop requested) while its token is tried
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1', TREEWARDEN_STOP_GRACE_MS: '60000' });
});
afterAll(async () => {
  await h?.close();
});

const state = (issueId: string) =>
  h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).query(watchdogStateQuery);

type Company = Awaited<ReturnType<typeof seedCompany>>;

/** A watched root with a leaf for each of two recording agents and one unassigned leaf, all at rest. */
async function selfWatchedTree(c: Company) {
  const [ownerA, ownerB] = [await recordingAgent(c), await recordingAgent(c)];
  const root = await c.issue({ title: 'self-checked tree' });
  const leafA = await c.issue({ title: 'leaf A', parentId: root.id, assigneeAgentId: ownerA.agent.id });
  const leafB = await c.issue({
    title: 'leaf B',
    parentId: root.id,
    assigneeAgentId: ownerB.agent.id,
    status: 'blocked',
    blockedReason: 'the vendor sends the API key',
  });
  const unassigned = await c.issue({ title: 'nobody owns this', parentId: root.id });
  return { ownerA, ownerB, root, leafA, leafB, unassigned };
}

const selfWakes = (watchdogId: string) =>
  h.services.db.wakeRequest.findMany({ where: { reviewWatchdogId: watchdogId }, orderBy: { issueId: 'asc' } });

test("a new stop wakes each stopped leaf's own assignee once, on its leaf, under that leaf's review contract", async () => {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const { ownerA, ownerB, root, leafA, leafB, unassigned } = await selfWatchedTree(c);
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id, mode: 'self' });
  expect([put.status, put.body.mode]).toEqual([201, 'self']);
  const watchdogId = put.body.id as string;

  const wakes = await eventually('a wake per assigned leaf', async () => {
    const rows = await selfWakes(watchdogId);
    return rows.length === 2 ? rows : null;
  });
  expect(wakes.map((w) => [w.issueId, w.agentId, w.reason, w.selfReview]).sort()).toEqual(
    [
      [leafA.id, ownerA.agent.id, 'task_watchdog_self_check', true],
      [leafB.id, ownerB.agent.id, 'task_watchdog_self_check', true],
    ].sort(),
  );
  const db = h.services.db;
  // no review task, and the watchdog's agent is not woken
  expect(await db.issue.count({ where: { originKind: 'task_watchdog', originId: root.id } })).toBe(0);
  expect(await db.wakeRequest.count({ where: { agentId: watcher.id } })).toBe(0);
  const [triggered] = await db.activityLog.findMany({
    where: { action: 'issue.task_watchdog_triggered', entityId: root.id },
  });
  expect(triggered.details).toMatchObject({
    mode: 'self',
    watchdogId,
    reviewIssueId: null,
    unwokenLeaves: [{ id: unassigned.id, reason: 'unassigned' }],
  });
  expect(
    await db.notification.count({ where: { subject: `task-watchdog:${watchdogId}`, kind: 'watchdog_stopped' } }),
  ).toBe(1);

  // each agent is told of its own leaf only, with the self mandate, and B of its blocked leaf's exit
  const contextA = (await ownerA.context()).taskWatchdog as Record<string, unknown>;
  expect(contextA).toMatchObject({
    mode: 'self',
    watchdogId,
    reviewIssueId: leafA.id,
    stoppedLeaves: [{ id: leafA.id }],
  });
  expect(contextA.mandate).toContain('verify your own stop');
  const contextB = (await ownerB.context()).taskWatchdog as { blockedLeaves: unknown[] };
  expect(contextB.blockedLeaves).toEqual([
    expect.objectContaining({ id: leafB.id, blockedReason: 'the vendor sends the API key' }),
  ]);

  // the review contract over its own leaf: it may work there, not on its sibling, the root or the configuration
  const tokenA = await ownerA.token();
  const comment = await h.request('POST', `/api/issues/${leafA.id}/comments`, tokenA, { body: 'checked: tests pass' });
  expect(comment.status).toBe(201);
  const refused = [
    await h.request('PATCH', `/api/issues/${leafB.id}`, tokenA, { status: 'todo' }),
    await h.request('POST', `/api/issues/${root.id}/comments`, tokenA, { body: 'probe' }),
    await h.request('PATCH', `/api/issues/${leafA.id}`, tokenA, { title: 'renamed' }),
    await h.request('PUT', `/api/issues/${root.id}/watchdog`, tokenA, { agentId: watcher.id, mode: 'review' }),
  ];
  expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403]);
  const feed = await h.request('GET', `/api/issues/${leafA.id}/activity`, c.token);
  const commented = (feed.body.items as { action: string; watchdogRun: unknown }[]).find(
    (e) => e.action === 'issue.comment_added',
  );
  expect(commented?.watchdogRun).toMatchObject({ watchdogId, watchedIssueId: leafA.id, reviewIssueId: leafA.id });

  // the verifications end with the stop as it was: evaluated again, it wakes nobody
  ownerA.finish();
  ownerB.finish();
  await eventually('both verifications ended', async () => {
    const runs = await db.run.findMany({ where: { reviewWatchdogId: watchdogId } });
    return runs.length === 2 && runs.every((r) => isTerminalRunStatus(r.status));
  });
  const before = (await state(root.id)).evaluations;
  await h.services.client.workflow
    .getHandle(workflowId.taskWatchdog(root.id))
    .signal(subtreeChangedSignal, { watchdogId, reason: 'nudge' });
  await eventually('evaluated again at rest', async () => {
    const s = await state(root.id);
    return s.evaluations > before && s.lastEvaluation?.state === 'already_reviewed';
  });
  expect(await selfWakes(watchdogId)).toHaveLength(2);
});

test("leaving self mode revokes the leaves' verifications and stops them", async () => {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const { ownerA, ownerB, root, leafA } = await selfWatchedTree(c);
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id, mode: 'self' });
  const watchdogId = put.body.id as string;
  const tokenA = await ownerA.token();
  await ownerB.token();

  const observe = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
    agentId: watcher.id,
    mode: 'observe',
  });
  expect(observe.status).toBe(200);
  const refused = await h.request('POST', `/api/issues/${leafA.id}/comments`, tokenA, { body: 'still here' });
  expect(refused.status).toBe(403);
  expect(refused.body.error.message).toContain('no longer lets stopped leaves verify');
  const runs = await h.services.db.run.findMany({ where: { reviewWatchdogId: watchdogId } });
  expect(runs).toHaveLength(2);
  expect(runs.every((r) => r.stopRequestedAt !== null)).toBe(true);
  ownerA.finish();
  ownerB.finish();
});
