/**
 * @module Seed 002's composer rules (issue 24, finding 5): while a hold covers an issue, a person's
 * message is 409 whether it comes as a comment or inside an update, and nothing of that update is
 * written; a pause says, per stopped run, whether its stop is verified, and a hold whose stops left
 * survivors shows them (its stop state is not `verified`) until a verification finds them gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { reapOrphans } from '../processes/orphans';
import { eventually, runRow, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

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
const getHold = async (c: Company, holdId: string) =>
  (await h.request('GET', `/api/tree-holds/${holdId}`, c.token)).body;
const memberOf = (hold: { members: { issueId: string }[] }, issueId: string) =>
  hold.members.find((m) => m.issueId === issueId) as any;

async function wakeRunning(c: Company, issueId: string) {
  const wake = await h.request('POST', `/api/issues/${issueId}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  const runId = wake.body.runId as string;
  await eventually('the run has its process group', async () => (await runRow(h, runId)).processGroupId !== null);
  return runId;
}

const exited = (p: ChildProcess) =>
  new Promise<void>((resolve) =>
    p.exitCode !== null || p.signalCode !== null ? resolve() : p.once('exit', () => resolve()),
  );

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

test('a pause answers with each stop unverified until proven; a survivor keeps the hold partial, listed, until it is gone', async () => {
  const c = await seedCompany(h);
  // a writer the run names in its writer lock but does not own: a stop never signals it, and is not clean while it lives
  const writer = spawn('sleep', ['300'], { stdio: 'ignore' });
  try {
    const parent = await c.issue({ title: 'paused parent' });
    const holdsWriter = await c.agent({
      type: 'process',
      command: 'sh',
      args: ['-c', `echo ${writer.pid} > "$TREEWARDEN_WRITER_LOCK"; sleep 120`],
    });
    const ignoresTerm = await c.agent({ type: 'process', command: 'sh', args: ['-c', 'trap "" TERM; sleep 120'] });
    const a = await c.issue({ title: 'writer', parentId: parent.id, assigneeAgentId: holdsWriter.id });
    const b = await c.issue({ title: 'ignores TERM', parentId: parent.id, assigneeAgentId: ignoresTerm.id });
    const idle = await c.issue({ title: 'no run', parentId: parent.id });
    const runA = await wakeRunning(c, a.id);
    const runB = await wakeRunning(c, b.id);

    const answer = await pause(c, parent.id);
    // requested, not verified: the writer lives, and the TERM-ignoring shell outlives the grace period
    expect(answer.status).toBe('active');
    expect(answer.stopState).not.toBe('verified');
    expect(memberOf(answer, a.id).stop).toMatchObject({
      runId: runA,
      state: expect.stringMatching(/^(pending|partial)$/),
    });
    expect(memberOf(answer, b.id).stop).toMatchObject({ runId: runB });
    expect(memberOf(answer, b.id).stop.state).not.toBe('verified');
    expect(memberOf(answer, idle.id).stop).toBeNull();

    await Promise.all([settled(h, runA), settled(h, runB)]);
    const partial = await getHold(c, answer.id);
    expect(partial).toMatchObject({
      status: 'active',
      stopState: 'partial',
      survivors: [{ runId: runA, issueId: a.id, processes: [], writersAlive: 1 }],
    });
    expect(memberOf(partial, a.id).stop).toMatchObject({ state: 'partial', verdict: 'stop-partial', writersAlive: 1 });
    // SIGTERM left the shell, SIGKILL took it: verified, whatever the first attempt found
    expect(memberOf(partial, b.id).stop).toMatchObject({ state: 'verified', verdict: 'terminal-clean', survivors: [] });
    expect((await runRow(h, runB)).stopResult).toMatchObject({ attempts: [{ verdict: 'stop-partial' }, {}] });

    // verified again while the writer lives: still partial, and nothing is recorded
    const recorded = (await runRow(h, runA)).stopResult;
    expect((await reapOrphans(h.services)).verified).not.toContain(runA);
    expect((await runRow(h, runA)).stopResult).toEqual(recorded);
    expect((await getHold(c, answer.id)).stopState).toBe('partial');

    writer.kill('SIGKILL');
    await exited(writer);
    expect((await reapOrphans(h.services)).verified).toContain(runA);
    const verified = await getHold(c, answer.id);
    expect(verified).toMatchObject({ status: 'active', stopState: 'verified', survivors: [] });
    expect(memberOf(verified, a.id).stop).toMatchObject({ state: 'verified', verdict: 'terminal-clean' });
    expect((await runRow(h, runA)).stopResult).toMatchObject({ previous: { verdict: 'stop-partial' } });
  } finally {
    writer.kill('SIGKILL');
  }
});
