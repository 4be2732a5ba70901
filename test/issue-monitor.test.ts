/**
 * @module A one-shot monitor per issue (issue 44, item 6): `PUT /api/issues/:id/monitor { at, note }` wakes the issue's
 * assignee once at that time (reason `issue_monitor`, the note in the wake's context) from the
 * `issue-monitor:<issueId>` workflow's timer; a refresh moves it and a DELETE ends it, neither waking at the old
 * time; a pending monitor is a waiting path for a watchdog; a review run may set one inside its watched subtree and
 * not outside it; bad input is refused with nothing written.
 */
import { workflowId } from '../domain/ids';
import { eventually, seedCompany, settled, startHarness, type Harness } from '../testing/harness';
import { companyFootprint } from './support/footprint';
import { recordingAgent } from './support/recording-agent';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
});
afterAll(async () => {
  await h?.close();
});

type Company = Awaited<ReturnType<typeof seedCompany>>;

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const monitorWakes = (issueId: string) =>
  h.services.db.wakeRequest.findMany({ where: { issueId, reason: 'issue_monitor' } });
/** The monitor's workflow completes once nothing is pending: after it, no other wake can come from it. */
const monitorDone = (issueId: string) =>
  h.services.client.workflow.getHandle(workflowId.issueMonitor(issueId)).result();

/** An open issue assigned to an agent that exits at once. */
async function assignedIssue(c: Company, title: string, parentId?: string) {
  const agent = await c.agent();
  return c.issue({ title, status: 'todo', assigneeAgentId: agent.id, ...(parentId ? { parentId } : {}) });
}

test('a monitor wakes its assignee once at its time, with its note', async () => {
  const c = await seedCompany(h);
  const issue = await assignedIssue(c, 'checked later');
  const at = inSeconds(3);
  const put = await h.request('PUT', `/api/issues/${issue.id}/monitor`, c.token, { at, note: 'is the deploy green?' });
  expect(put.status).toBe(201);
  expect(put.body).toMatchObject({ issueId: issue.id, status: 'pending', note: 'is the deploy green?', version: 1 });
  expect((await h.request('GET', `/api/issues/${issue.id}/monitor`, c.token)).body.status).toBe('pending');

  await monitorDone(issue.id);
  const wakes = await monitorWakes(issue.id);
  expect(wakes).toHaveLength(1);
  expect(wakes[0].context).toEqual({ monitor: { at, note: 'is the deploy green?', version: 1 } });
  const fired = (await h.request('GET', `/api/issues/${issue.id}/monitor`, c.token)).body;
  expect(fired).toMatchObject({ status: 'fired', wakeRequestId: wakes[0].id });
  const run = await h.services.db.run.findFirstOrThrow({ where: { issueId: issue.id } });
  expect(run.wakeReason).toBe('issue_monitor');
  expect((await settled(h, run.id)).status).toBe('succeeded');
});

test('a refreshed monitor wakes only at its new time, and a cleared one not at all', async () => {
  const c = await seedCompany(h);
  const refreshedLater = await assignedIssue(c, 'refreshed to later');
  const refreshedSooner = await assignedIssue(c, 'refreshed to sooner');
  const cleared = await assignedIssue(c, 'cleared');
  const probe = await assignedIssue(c, 'probe');
  const set = (issueId: string, at: string, note: string) =>
    h.request('PUT', `/api/issues/${issueId}/monitor`, c.token, { at, note });

  expect((await set(refreshedLater.id, inSeconds(2), 'first')).status).toBe(201);
  const later = await set(refreshedLater.id, inSeconds(2 * 3600), 'moved');
  expect(later.status).toBe(200);
  expect(later.body).toMatchObject({ version: 2, note: 'moved', status: 'pending' });
  expect((await set(refreshedSooner.id, inSeconds(2 * 3600), 'first')).status).toBe(201);
  const soonerAt = inSeconds(3);
  expect((await set(refreshedSooner.id, soonerAt, 'moved')).status).toBe(200);
  expect((await set(cleared.id, inSeconds(2), 'first')).status).toBe(201);
  const deleted = await h.request('DELETE', `/api/issues/${cleared.id}/monitor`, c.token);
  expect(deleted.status).toBe(200);
  expect(deleted.body).toMatchObject({ status: 'cleared', version: 2 });
  expect((await h.request('DELETE', `/api/issues/${cleared.id}/monitor`, c.token)).status).toBe(404);
  // a timer on the same server clock, due after every old time: once it has fired, the old times have passed
  expect((await set(probe.id, inSeconds(6), 'probe')).status).toBe(201);

  await monitorDone(refreshedSooner.id);
  await monitorDone(cleared.id);
  await monitorDone(probe.id);
  const sooner = await monitorWakes(refreshedSooner.id);
  expect(sooner.map((w) => w.context)).toEqual([{ monitor: { at: soonerAt, note: 'moved', version: 2 } }]);
  expect(await monitorWakes(probe.id)).toHaveLength(1);
  expect(await monitorWakes(refreshedLater.id)).toEqual([]);
  expect(await monitorWakes(cleared.id)).toEqual([]);
  expect((await h.request('GET', `/api/issues/${refreshedLater.id}/monitor`, c.token)).body.status).toBe('pending');
  expect((await h.request('DELETE', `/api/issues/${refreshedLater.id}/monitor`, c.token)).status).toBe(200);
  await monitorDone(refreshedLater.id);
  expect(await monitorWakes(refreshedLater.id)).toEqual([]);
});

test('a watched subtree whose only open leaf has a pending monitor is not a new stop', async () => {
  const c = await seedCompany(h);
  const root = await c.issue({ title: 'watched' });
  const leaf = await assignedIssue(c, 'waits for its monitor', root.id);
  expect((await h.request('PUT', `/api/issues/${leaf.id}/monitor`, c.token, { at: inSeconds(3600) })).status).toBe(201);
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
    agentId: (await c.agent()).id,
    mode: 'observe',
  });
  expect(put.status).toBe(201);
  const watchdog = () => h.services.db.watchdog.findUniqueOrThrow({ where: { id: put.body.id } });
  const evaluated = await eventually('the first evaluation', async () => {
    const w = await watchdog();
    return w.lastEvaluation as { state: string; liveIssueIds: string[] } | null;
  });
  expect(evaluated).toMatchObject({ state: 'live', liveIssueIds: [leaf.id] });
  expect((await watchdog()).lastObservedFingerprint).toBeNull();

  // the monitor was the only path: cleared, the subtree is a stop, and the watchdog sees it
  expect((await h.request('DELETE', `/api/issues/${leaf.id}/monitor`, c.token)).status).toBe(200);
  await eventually('the stop observed', async () => (await watchdog()).lastObservedFingerprint);
});

test('a review run may set a monitor inside its watched subtree and not outside it (403)', async () => {
  const c = await seedCompany(h);
  const watcher = await recordingAgent(c);
  const root = await c.issue({ title: 'watched' });
  const helper = await c.agent();
  await c.issue({ title: 'done leaf', parentId: root.id, status: 'done', assigneeAgentId: helper.id });
  const open = await c.issue({
    title: 'open leaf',
    parentId: root.id,
    status: 'in_review',
    assigneeAgentId: helper.id,
  });
  const outside = await assignedIssue(c, 'outside the watched subtree');
  expect(
    (await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.agent.id })).status,
  ).toBe(201);
  const token = await watcher.token();

  const before = await companyFootprint(h.services.db, c.companyId);
  const refused = await h.request('PUT', `/api/issues/${outside.id}/monitor`, token, { at: inSeconds(3600) });
  expect(refused.status).toBe(403);
  expect(refused.body.error.message).toContain('inside the watched subtree');
  expect(await companyFootprint(h.services.db, c.companyId)).toEqual(before);

  const inside = await h.request('PUT', `/api/issues/${open.id}/monitor`, token, {
    at: inSeconds(3600),
    note: 'later',
  });
  expect(inside.status).toBe(201);
  expect((await h.request('PUT', `/api/issues/${open.id}/monitor`, token, { at: inSeconds(7200) })).status).toBe(200);
  expect((await h.request('DELETE', `/api/issues/${open.id}/monitor`, c.token)).status).toBe(200);
  watcher.finish();
});

test('bad input is refused with a clear error, and nothing is written', async () => {
  const c = await seedCompany(h);
  const issue = await assignedIssue(c, 'target');
  const unassigned = await c.issue({ title: 'nobody to wake' });
  const done = await c.issue({ title: 'closed', status: 'done', assigneeAgentId: (await c.agent()).id });
  const before = await companyFootprint(h.services.db, c.companyId);
  const put = (issueId: string, body: unknown) => h.request('PUT', `/api/issues/${issueId}/monitor`, c.token, body);

  const answers = [
    [await put(issue.id, { at: inSeconds(-5) }), 422, 'at: must be at least 1 second in the future'],
    [await put(issue.id, { at: inSeconds(91 * 86_400) }), 422, 'at: must be at most 90 days in the future'],
    [await put(issue.id, { at: 'tomorrow' }), 400, 'at'],
    [await put(issue.id, { at: inSeconds(60), note: 'x'.repeat(2001) }), 400, 'note'],
    [await put(issue.id, { at: inSeconds(60), wake: true }), 400, 'wake'],
    [await put(unassigned.id, { at: inSeconds(60) }), 409, 'has no assignee'],
    [await put(done.id, { at: inSeconds(60) }), 409, 'is done'],
    [await put('not-a-uuid', { at: inSeconds(60) }), 400, 'issueId'],
  ] as const;
  for (const [answer, status, message] of answers) {
    expect([answer.status, answer.body.error.message]).toEqual([status, expect.stringContaining(message)]);
  }
  expect((await h.request('GET', `/api/issues/${issue.id}/monitor`, c.token)).body).toBeNull();
  expect(await companyFootprint(h.services.db, c.companyId)).toEqual(before);
});
