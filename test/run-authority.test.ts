/**
 * @module Authority comes from the server's own rows (issue 24), tried as an attacker would: with the HTTP API and
 * the tokens of real agent processes. A wake's context cannot carry a reserved key (400, nothing written), nested
 * look-alikes are the agent's data and widen nothing, a stored directive of the wrong shape crashes no run, a review
 * run loses every right the moment its watchdog is removed or reassigned (and is stopped), and while the watched
 * subtree cannot be read in full its run may only comment on its review task.
 */
import { workflowId } from '../domain/ids';
import { RESERVED_CONTEXT_KEYS, RESERVED_WAKE_REASONS } from '../domain/run-directive';
import { createWake, dispatchWake } from '../dispatch/wakes';
import { subtreeChangedSignal } from '../workflows/definitions';
import { eventually, runRow, seedCompany, settled, startHarness, type Harness } from '../testing/harness';
import { companyFootprint } from './support/footprint';
import { recordingAgent } from './support/recording-agent';

let h: Harness;
beforeAll(async () => {
  // a stop escalates to SIGKILL only after a minute: a review run ignoring SIGTERM stays live (stop requested)
  // while the test tries its token, instead of ending and making it merely expired
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1', TREEWARDEN_STOP_GRACE_MS: '60000' });
});
afterAll(async () => {
  await h?.close();
});

type Company = Awaited<ReturnType<typeof seedCompany>>;

const forgedReview = (watchedIssueId: string, reviewIssueId: string) => ({
  watchdogId: '00000000-0000-4000-8000-000000000001',
  watchedIssueId,
  reviewIssueId,
  fingerprint: 'forged',
  stoppedLeaves: [],
});

const footprint = (companyId: string) => companyFootprint(h.services.db, companyId);

/** The writes a run token might try on an issue (and its own run), each one answered. */
async function everyWrite(token: string, issueId: string, runId: string, companyId: string) {
  return [
    await h.request('POST', `/api/issues/${issueId}/comments`, token, { body: 'probe' }),
    await h.request('PATCH', `/api/issues/${issueId}`, token, { status: 'in_progress', comment: 'probe' }),
    await h.request('POST', `/api/companies/${companyId}/issues`, token, { title: 'probe', parentId: issueId }),
    await h.request('POST', `/api/issues/${issueId}/interactions`, token, { kind: 'request_confirmation' }),
    await h.request('POST', `/api/runs/${runId}/jobs`, token, { kind: 'shell_job', command: 'true', args: [] }),
  ];
}

/** A live run of a recording agent on a fresh issue: the ordinary run token an attacker holds. */
async function ordinaryRun(c: Company) {
  const recorder = await recordingAgent(c);
  const issue = await c.issue({ title: 'A', assigneeAgentId: recorder.agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  return { issue, runId: wake.body.runId as string, token: await recorder.token(), recorder };
}

test('a run cannot mint watchdog authority through a wake: the reserved key is a 400 and nothing is written', async () => {
  const c = await seedCompany(h);
  const a = await ordinaryRun(c);
  const child = await c.issue({ title: 'A1', parentId: a.issue.id, assigneeAgentId: (await c.agent()).id });
  const z = await c.issue({ title: 'Z, outside A', status: 'todo' });
  const before = await footprint(c.companyId);
  const forged = await h.request('POST', `/api/issues/${child.id}/wake`, a.token, {
    context: { taskWatchdog: forgedReview(z.id, child.id) },
  });
  expect(forged.status).toBe(400);
  expect(forged.body.error.message).toContain('context.taskWatchdog');
  expect(await footprint(c.companyId)).toEqual(before);
  // and run A's own token still reaches nothing outside its subtree
  const outside = [
    await h.request('POST', `/api/issues/${z.id}/comments`, a.token, { body: 'probe' }),
    await h.request('POST', `/api/companies/${c.companyId}/issues`, a.token, { title: 'probe', parentId: z.id }),
    await h.request('PATCH', `/api/issues/${z.id}`, a.token, { status: 'in_progress' }),
  ];
  expect(outside.map((r) => r.status)).toEqual([403, 403, 403]);
  expect(await footprint(c.companyId)).toEqual(before);
  a.recorder.finish();
  expect((await settled(h, a.runId)).status).toBe('succeeded');
});

describe('every reserved context key and wake reason', () => {
  test('is refused with a 400 naming it, for a board token, a run token and a watchdog run token alike', async () => {
    const c = await seedCompany(h);
    const a = await ordinaryRun(c);
    const child = await c.issue({ title: 'A1', parentId: a.issue.id, assigneeAgentId: (await c.agent()).id });
    const watcher = await recordingAgent(c);
    const root = await c.issue({ title: 'watched' });
    await c.issue({ title: 'leaf', parentId: root.id, status: 'done' });
    await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.agent.id });
    const tokens = { board: c.token, run: a.token, 'watchdog run': await watcher.token() };
    const before = await footprint(c.companyId);
    for (const [kind, token] of Object.entries(tokens)) {
      for (const key of RESERVED_CONTEXT_KEYS) {
        const r = await h.request('POST', `/api/issues/${child.id}/wake`, token, { context: { [key]: 'x' } });
        expect([kind, key, r.status]).toEqual([kind, key, 400]);
        expect(r.body.error.message).toContain(`context.${key}`);
      }
      for (const reason of RESERVED_WAKE_REASONS) {
        const r = await h.request('POST', `/api/issues/${child.id}/wake`, token, { reason });
        expect([kind, reason, r.status]).toEqual([kind, reason, 400]);
        expect(r.body.error.message).toContain(reason);
      }
    }
    expect(await footprint(c.companyId)).toEqual(before);
    a.recorder.finish();
    watcher.finish();
  });

  test('nested one level down they are the agent data: accepted, shown to the agent, and they widen nothing', async () => {
    const c = await seedCompany(h);
    const a = await ordinaryRun(c);
    const woken = await recordingAgent(c);
    const child = await c.issue({ title: 'A1', parentId: a.issue.id, assigneeAgentId: woken.agent.id });
    const z = await c.issue({ title: 'Z, outside A', status: 'todo' });
    const lookalikes = Object.fromEntries(RESERVED_CONTEXT_KEYS.map((key) => [key, forgedReview(z.id, child.id)]));
    const wake = await h.request('POST', `/api/issues/${child.id}/wake`, a.token, { context: { notes: lookalikes } });
    expect(wake.status).toBe(202);
    const token = await woken.token();
    // the agent sees its waker's data where the waker put it, and nothing of the server's made up from it
    expect(await woken.context()).toEqual({ notes: lookalikes });
    const before = await footprint(c.companyId);
    const attempts = await everyWrite(token, z.id, a.runId, c.companyId);
    expect(attempts.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
    expect(await footprint(c.companyId)).toEqual(before);
    // an ordinary run, no crash: its agent exits 0 and the run succeeds
    const row = await runRow(h, wake.body.runId);
    expect([row.reviewWatchdogId, row.reviewFingerprint, row.directive]).toEqual([null, null, null]);
    woken.finish();
    a.recorder.finish();
    expect((await settled(h, wake.body.runId)).status).toBe('succeeded');
  });
});

test('a stored directive of the wrong shape is ignored, never what makes a run fail', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent({ type: 'process', command: 'true', args: [] });
  const issue = await c.issue({ title: 'old row', assigneeAgentId: agent.id });
  const { wake } = await h.services.db.$transaction((tx) =>
    createWake(tx, {
      companyId: c.companyId,
      agentId: agent.id,
      issueId: issue.id,
      reason: 'manual_wake',
      // written by older code, say: a review without its stopped leaves
      directive: { taskWatchdog: { watchdogId: 'w' } } as never,
    }),
  );
  const outcome = await dispatchWake(h.services, wake.id);
  expect(outcome.kind).toBe('dispatched');
  const run = await settled(h, (outcome as { runId: string }).runId);
  expect([run.status, run.exitCode, run.error]).toEqual(['succeeded', 0, null]);
});

describe('a review run whose watchdog', () => {
  /** A watched subtree with a live review run of a recording agent; its token and run. */
  async function liveReview() {
    const c = await seedCompany(h);
    const watcher = await recordingAgent(c);
    const helper = await c.agent();
    const root = await c.issue({ title: 'watched' });
    const leaf = await c.issue({ title: 'leaf', parentId: root.id, status: 'done', assigneeAgentId: helper.id });
    const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.agent.id });
    const token = await watcher.token();
    const run = await h.services.db.run.findFirstOrThrow({ where: { agentId: watcher.agent.id } });
    expect(run).toMatchObject({ reviewWatchdogId: put.body.id, status: 'running' });
    // the authority holds before the watchdog changes
    const allowed = await h.request('POST', `/api/issues/${leaf.id}/comments`, token, { body: 'checked' });
    expect(allowed.status).toBe(201);
    return { c, watcher, helper, root, leaf, token, run, watchdogId: put.body.id as string };
  }

  async function expectRevoked(review: Awaited<ReturnType<typeof liveReview>>, reason: string) {
    const { c, leaf, token, run } = review;
    const before = await footprint(c.companyId);
    const onLeaf = await everyWrite(token, leaf.id, run.id, c.companyId);
    const onReviewTask = await everyWrite(token, run.issueId, run.id, c.companyId);
    for (const r of [...onLeaf, ...onReviewTask]) {
      expect(r.status).toBe(403);
      expect(r.body.error.message).toBe(`watchdog authority revoked: ${reason}`);
    }
    expect(await footprint(c.companyId)).toEqual(before);
    // and the run itself was told to stop (its agent ignores SIGTERM: it is still unwinding)
    expect((await runRow(h, run.id)).stopRequestedAt).not.toBeNull();
  }

  test('was removed loses every write at once, and is stopped', async () => {
    const review = await liveReview();
    expect((await h.request('DELETE', `/api/issues/${review.root.id}/watchdog`, review.c.token)).status).toBe(200);
    await expectRevoked(review, 'its watchdog was removed');
    review.watcher.finish();
    expect((await settled(h, review.run.id)).status).toBe('cancelled');
  });

  test('was reassigned to another agent loses every write at once, and is stopped', async () => {
    const review = await liveReview();
    const successor = await review.c.agent();
    const put = await h.request('PUT', `/api/issues/${review.root.id}/watchdog`, review.c.token, {
      agentId: successor.id,
    });
    expect(put.status).toBe(200);
    await expectRevoked(review, 'its watchdog was reassigned to another agent');
    review.watcher.finish();
    expect((await settled(h, review.run.id)).status).toBe('cancelled');
  });

  test('cannot read the whole subtree may only comment on its review task: writes are 409 naming the issues', async () => {
    const review = await liveReview();
    const { c, root, leaf, token, run, watchdogId } = review;
    let parentId = leaf.id;
    for (let depth = 3; depth <= 102; depth++)
      parentId = (
        await h.services.db.issue.create({
          data: { companyId: c.companyId, parentId, title: `level ${depth}`, status: 'done' },
        })
      ).id;
    // the chain was inserted behind the API's back (no change recorded): a direct change signal evaluates it
    await h.services.client.workflow
      .getHandle(workflowId.taskWatchdog(root.id))
      .signal(subtreeChangedSignal, { watchdogId, reason: 'nudge' });
    const { incompleteIssueIds } = await eventually('the evaluation found the subtree incomplete', async () => {
      const w = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } });
      return w.incompleteIssueIds.length > 0 ? w : null;
    });
    const before = await footprint(c.companyId);
    const writes = await everyWrite(token, leaf.id, run.id, c.companyId);
    for (const r of writes) {
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: 'subtree_incomplete', details: { incompleteIssueIds } });
      for (const id of incompleteIssueIds) expect(r.body.error.message).toContain(id);
    }
    const disposition = await h.request('PATCH', `/api/issues/${run.issueId}`, token, { status: 'done' });
    expect(disposition.status).toBe(409);
    expect(await footprint(c.companyId)).toEqual(before);
    // reads and a comment on its own review task stay allowed
    expect((await h.request('GET', `/api/issues/${leaf.id}`, token)).status).toBe(200);
    const note = await h.request('POST', `/api/issues/${run.issueId}/comments`, token, { body: 'cannot see it all' });
    expect(note.status).toBe(201);
    review.watcher.finish();
    expect((await settled(h, run.id)).status).toBe('succeeded');
  });
});
