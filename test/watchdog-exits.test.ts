/**
 * @module Issue 29, items 3, 4 and 6, against the real stack (the watchdog's workflow, its evaluations, the API and
 * the database): a stop that only shrank wakes nobody; `blocked` needs an exit (422 otherwise, nothing written) and
 * a review wake lists each blocked leaf's exit, calling out the resolved ones; an issue's activity feed lists a
 * watchdog run's writes with their five facts, newest first and paged, and the tree's badges link the watched
 * issue and its review task both ways.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { workflowId } from '../domain/ids';
import { subtreeChangedSignal, watchdogStateQuery } from '../workflows/definitions';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { companyFootprint } from './support/footprint';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
});
afterAll(async () => {
  await h?.close();
});

const REASON = { blockedReason: 'the operator restores the staging database' };

const state = (issueId: string) =>
  h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).query(watchdogStateQuery);

/** Tells the watchdog its subtree changed, for a write the API does not make (an issue deleted by the main app). */
const nudge = (issueId: string, watchdogId: string) =>
  h.services.client.workflow
    .getHandle(workflowId.taskWatchdog(issueId))
    .signal(subtreeChangedSignal, { watchdogId, reason: 'issue_deleted' });

const reviewWakes = (watchdogId: string) =>
  h.services.db.wakeRequest.findMany({ where: { reviewWatchdogId: watchdogId }, orderBy: { createdAt: 'asc' } });

test('a stop that differs from the reviewed one only by leaves that left wakes nobody; a changed leaf does', async () => {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const root = await c.issue({ title: 'shrinking tree' });
  const leaves = [];
  for (const title of ['schema', 'backfill', 'cleanup'])
    leaves.push(await c.issue({ title, parentId: root.id, status: 'done' }));
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  const watchdogId = put.body.id as string;
  const [wake] = await eventually('the review wake', async () => {
    const wakes = await reviewWakes(watchdogId);
    return wakes.length === 1 && wakes[0].runId ? wakes : null;
  });
  const reviewed = wake.reviewFingerprint!;
  // the review reaches its disposition: the stop is reviewed, with its three leaves
  const db = h.services.db;
  const reviewIssueId = (await db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } })).reviewIssueId!;
  await eventually(
    'the review run ended',
    async () => (await db.run.findFirst({ where: { id: wake.runId! } }))?.finishedAt,
  );
  expect((await h.request('PATCH', `/api/issues/${reviewIssueId}`, c.token, { status: 'done' })).status).toBe(200);
  await nudge(root.id, watchdogId);
  await eventually('the stop reviewed', async () => {
    const row = await db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } });
    return row.lastReviewedFingerprint === reviewed && row.reviewedLeafDigests.length === 3;
  });

  // a completed leaf is deleted: the stop's fingerprint changes, yet every leaf in it was reviewed
  const before = (await state(root.id)).evaluations;
  await db.issue.delete({ where: { id: leaves[2].id } });
  await nudge(root.id, watchdogId);
  const shrunk = await eventually('the evaluation after the deletion', async () => {
    const s = await state(root.id);
    return s.evaluations > before && s.pendingChanges === 0 ? s.lastEvaluation : null;
  });
  expect(shrunk.state).toBe('already_reviewed');
  expect(shrunk.fingerprint).not.toBe(reviewed);
  expect(shrunk.lastReviewedFingerprint).toBe(shrunk.fingerprint);
  expect(shrunk.woke).toBe(false);
  expect(await reviewWakes(watchdogId)).toHaveLength(1);
  const audits = await db.activityLog.findMany({ where: { action: 'issue.task_watchdog_stop_shrank' } });
  expect(audits.map((a) => a.details)).toEqual([
    expect.objectContaining({ watchdogId, reviewedFingerprint: reviewed, leftLeafCount: 1 }),
  ]);

  // a leaf that changes is new, so the same watchdog wakes its agent again
  expect(
    (await h.request('PATCH', `/api/issues/${leaves[0].id}`, c.token, { status: 'blocked', ...REASON })).status,
  ).toBe(200);
  await eventually('a second review wake', async () => (await reviewWakes(watchdogId)).length === 2);
});

test('entering blocked without an exit is a 422 naming it, and writes nothing', async () => {
  const c = await seedCompany(h);
  const root = await c.issue({ title: 'parked work' });
  const leaf = await c.issue({ title: 'integrate the vendor API', parentId: root.id, status: 'in_progress' });
  const before = await companyFootprint(h.services.db, c.companyId);
  const refusals = [
    await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { status: 'blocked', comment: 'stuck' }),
    await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { status: 'blocked', blockedByIssueIds: [] }),
    await h.request('POST', `/api/companies/${c.companyId}/issues`, c.token, { title: 'x', status: 'blocked' }),
  ];
  for (const r of refusals) {
    expect([r.status, r.body.error.code]).toEqual([422, 'unprocessable']);
    expect(r.body.error.message).toContain('cannot be blocked without an exit');
    expect(r.body.error.message).toContain('blockedReason');
    expect(r.body.error.details).toMatchObject({ missing: 'exit' });
  }
  // a reason is the exit of a blocked issue only
  const misplaced = await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { status: 'todo', ...REASON });
  expect(misplaced.status).toBe(422);
  expect(await companyFootprint(h.services.db, c.companyId)).toEqual(before);

  // each exit on its own is enough; leaving blocked clears the reason
  const blocker = await c.issue({ title: 'vendor contract', parentId: root.id });
  const byIssue = await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, {
    status: 'blocked',
    blockedByIssueIds: [blocker.id],
  });
  expect([byIssue.status, byIssue.body.blockedReason]).toEqual([200, null]);
  expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { status: 'todo' })).status).toBe(200);
  const byReason = await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { status: 'blocked', ...REASON });
  expect([byReason.status, byReason.body.blockedReason]).toEqual([200, REASON.blockedReason]);
  const reopened = await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { status: 'in_progress' });
  expect([reopened.status, reopened.body.blockedReason]).toEqual([200, null]);
  const asked = await h.request('POST', `/api/issues/${leaf.id}/interactions`, c.token, {
    kind: 'request_confirmation',
  });
  expect(asked.status).toBe(201);
  expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { status: 'blocked' })).status).toBe(200);
});

test('a review wake lists each blocked leaf with its exit and calls out the ones whose exit is resolved', async () => {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const root = await c.issue({ title: 'release 4.2' });
  const child = (title: string, extra: Record<string, unknown> = {}) => c.issue({ title, parentId: root.id, ...extra });
  const open = await child('security review', { status: 'in_review' });
  const done = await child('translations', { status: 'done' });
  const waitsOnOpen = await child('ship the installer');
  const waitsOnDone = await child('publish the notes');
  const waitsOnReason = await child('announce it', { status: 'blocked', ...REASON });
  const waitsOnAnswer = await child('pick the launch date');
  const block = (issueId: string, body: Record<string, unknown>) =>
    h.request('PATCH', `/api/issues/${issueId}`, c.token, { status: 'blocked', ...body });
  expect((await block(waitsOnOpen.id, { blockedByIssueIds: [open.id] })).status).toBe(200);
  expect((await block(waitsOnDone.id, { blockedByIssueIds: [done.id] })).status).toBe(200);
  const question = await h.request('POST', `/api/issues/${waitsOnAnswer.id}/interactions`, c.token, {
    kind: 'request_confirmation',
  });
  expect((await block(waitsOnAnswer.id, {})).status).toBe(200);
  // answered, but nobody unblocked the leaf: its exit is resolved and it is still parked
  expect((await h.request('POST', `/api/interactions/${question.body.id}/resolve`, c.token, {})).status).toBe(200);

  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  const [wake] = await eventually('the review wake', async () => {
    const wakes = await reviewWakes(put.body.id);
    return wakes.length === 1 ? wakes : null;
  });
  const { blockedLeaves } = (wake.directive as { taskWatchdog: { blockedLeaves: { id: string }[] } }).taskWatchdog;
  const exitOf = (id: string) => blockedLeaves.find((l) => l.id === id);
  expect(blockedLeaves.map((l) => l.id).sort()).toEqual(
    [waitsOnOpen.id, waitsOnDone.id, waitsOnReason.id, waitsOnAnswer.id].sort(),
  );
  expect(exitOf(waitsOnOpen.id)).toEqual({
    id: waitsOnOpen.id,
    blockingIssues: [{ id: open.id, status: 'in_review', resolved: false }],
    pendingInteractionIds: [],
    executionBlockerIds: [],
    blockedReason: null,
    exitResolved: false,
  });
  expect(exitOf(waitsOnDone.id)).toMatchObject({
    blockingIssues: [{ id: done.id, status: 'done', resolved: true }],
    exitResolved: true,
  });
  expect(exitOf(waitsOnReason.id)).toMatchObject({ blockedReason: REASON.blockedReason, exitResolved: false });
  expect(exitOf(waitsOnAnswer.id)).toMatchObject({
    blockingIssues: [],
    pendingInteractionIds: [],
    blockedReason: null,
    exitResolved: true,
  });
});

/** An agent that hands its run token to the test through a file, then waits until told to finish. */
async function tokenAgent(c: Awaited<ReturnType<typeof seedCompany>>) {
  const base = `/tmp/tw-exits-${randomBytes(6).toString('hex')}`;
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: ['-c', 'echo "$TREEWARDEN_RUN_TOKEN" > "$TOKEN"; while [ ! -f "$DONE" ]; do sleep 0.2; done'],
    env: { TOKEN: `${base}.token`, DONE: `${base}.done` },
  });
  return {
    agent,
    token: () =>
      eventually(
        'the run token',
        async () => existsSync(`${base}.token`) && readFileSync(`${base}.token`, 'utf8').trim(),
      ),
    finish: () => writeFileSync(`${base}.done`, ''),
  };
}

test("the activity feed lists a watchdog run's writes with its five facts, newest first, a page at a time", async () => {
  const c = await seedCompany(h);
  const reviewer = await tokenAgent(c);
  const root = await c.issue({ title: 'audited tree' });
  const leaf = await c.issue({ title: 'the migration', parentId: root.id, status: 'done' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: reviewer.agent.id });
  const watchdogId = put.body.id as string;
  const token = await reviewer.token();
  const [wake] = await reviewWakes(watchdogId);
  const reviewIssueId = (await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } })).reviewIssueId!;

  // the review run reopens the leaf with a comment, and comments twice more
  const reopen = await h.request('PATCH', `/api/issues/${leaf.id}`, token, { status: 'todo', comment: 'no tests ran' });
  expect(reopen.status).toBe(200);
  for (const body of ['see the CI log', 'rerun after the fix'])
    expect((await h.request('POST', `/api/issues/${leaf.id}/comments`, token, { body })).status).toBe(201);
  reviewer.finish();

  const facts = {
    watchdogId,
    watchedIssueId: root.id,
    reviewIssueId,
    runId: wake.runId,
    fingerprint: wake.reviewFingerprint,
  };
  const feed = await h.request('GET', `/api/issues/${leaf.id}/activity`, c.token);
  expect(feed.status).toBe(200);
  expect(feed.body.items.map((a: { action: string }) => a.action)).toEqual([
    'issue.comment_added',
    'issue.comment_added',
    'issue.updated',
    'issue.created',
  ]);
  for (const item of feed.body.items.slice(0, 3)) {
    expect(item.actor).toEqual({ kind: 'run', agentId: reviewer.agent.id, runId: wake.runId });
    expect(item.watchdogRun).toEqual(facts);
  }
  expect(feed.body.items[3]).toMatchObject({ actor: { kind: 'board', agentId: null, runId: null }, watchdogRun: null });
  expect(feed.body.nextCursor).toBeNull();

  // paged two at a time: the same entries, in the same order, each once
  const paged = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: { items: { id: string }[]; nextCursor: string | null } } = await h.request(
      'GET',
      `/api/issues/${leaf.id}/activity?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      c.token,
    );
    expect(page.status).toBe(200);
    paged.push(...page.body.items);
    cursor = page.body.nextCursor;
  } while (cursor);
  expect(paged.map((a) => a.id)).toEqual(feed.body.items.map((a: { id: string }) => a.id));
  expect((await h.request('GET', `/api/issues/${leaf.id}/activity?cursor=nonsense`, c.token)).status).toBe(400);
  const stranger = await seedCompany(h, 'Other');
  expect((await h.request('GET', `/api/issues/${leaf.id}/activity`, stranger.token)).status).toBe(404);

  // badges: the watched issue links to its review task, the review task to the issue it reviews
  const tree = await h.request('GET', `/api/issues/${root.id}/tree`, c.token);
  expect(tree.body.watchdog).toMatchObject({ id: watchdogId, reviewIssueId });
  const reviewNode = tree.body.children.find((n: { id: string }) => n.id === reviewIssueId);
  expect(reviewNode.reviewOf).toEqual({ watchedIssueId: root.id });
  expect(tree.body.reviewOf).toBeNull();
});
