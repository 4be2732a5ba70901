/**
 * @module Seed 002's composer rules (issue 24, finding 5): while a hold covers an issue, a person's
 * message is 409 whether it comes as a comment or inside an update, and nothing of that update is
 * written.
 */
import { seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

type Company = Awaited<ReturnType<typeof seedCompany>>;

async function pause(c: Company, issueId: string) {
  const r = await h.request('POST', `/api/issues/${issueId}/tree-holds`, c.token, { mode: 'pause' });
  expect(r.status).toBe(201);
  return r.body;
}

test('a PATCH carrying a comment on a held issue is 409 like a plain comment, and writes nothing of the update', async () => {
  const c = await seedCompany(h);
  const root = await c.issue({ title: 'paused root' });
  const child = await c.issue({ title: 'held child', parentId: root.id, status: 'in_progress' });
  const other = await c.issue({ title: 'would block' });
  const hold = await pause(c, root.id);
  const written = () =>
    Promise.all([
      h.services.db.issue.findUniqueOrThrow({ where: { id: child.id }, include: { blockedBy: true } }),
      h.services.db.comment.count({ where: { issueId: child.id } }),
      h.services.db.activityLog.count({ where: { entityId: child.id, action: 'issue.updated' } }),
    ]);
  const before = await written();

  const plain = await h.request('POST', `/api/issues/${child.id}/comments`, c.token, { body: 'go on' });
  const update = { title: 'renamed', status: 'done', blockedByIssueIds: [other.id], comment: 'done, go on' };
  const patched = await h.request('PATCH', `/api/issues/${child.id}`, c.token, update);
  expect(plain.status).toBe(409);
  expect(patched.status).toBe(409);
  expect(patched.body).toEqual(plain.body);
  expect(patched.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('tree hold') });
  // the root itself is covered by its own hold, and a blank comment is a comment too
  const onRoot = await h.request('PATCH', `/api/issues/${root.id}`, c.token, { status: 'done', comment: ' ' });
  expect(onRoot.status).toBe(409);
  expect(await written()).toEqual(before);
  expect((await h.services.db.issue.findUniqueOrThrow({ where: { id: root.id } })).status).toBe('todo');

  // the hold refuses messages, not updates: without a comment the update goes through
  const quiet = await h.request('PATCH', `/api/issues/${child.id}`, c.token, { status: 'in_review' });
  expect(quiet).toMatchObject({ status: 200, body: { status: 'in_review' } });

  const released = await h.request('POST', `/api/issues/${root.id}/tree-holds/${hold.id}/release`, c.token, {});
  expect(released.status).toBe(200);
  const after = await h.request('PATCH', `/api/issues/${child.id}`, c.token, { status: 'done', comment: 'finished' });
  expect(after).toMatchObject({ status: 200, body: { status: 'done' } });
  expect(await h.services.db.comment.findMany({ where: { issueId: child.id } })).toMatchObject([{ body: 'finished' }]);
});
