/**
 * @module Tree holds (seed 002): a pause interrupts its subtree's work; every release re-dispatches
 * exactly the work the pause interrupted, once, and never replays a run of unknown outcome.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { WorkflowFailedError } from '@temporalio/client';
import { workflowId } from '../domain/ids';
import { StateKey } from '../domain/search-attributes';
import { runFiles } from '../runs/run-files';
import { createWake, dispatchWake } from '../dispatch/wakes';
import { holdStateQuery } from '../workflows/definitions';
import { statementsSentDuring } from '../testing/statements';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { moveTo } from './support/blocked';

let h: Harness;
beforeAll(async () => {
  // a long grace, so a stop that traps SIGTERM stays unwinding long enough to release during it
  // two retries of failed resume wakes (1 s, then 2 s later) before a hold gives up on them
  h = await startHarness({ TREEWARDEN_STOP_GRACE_MS: '20000', TREEWARDEN_HOLD_RESUME_RETRIES: '2' });
});
afterAll(async () => {
  await h?.close();
});

/** A prepare step that blocks only on the first run, so the resumed run passes straight through. */
function slowFirstPrepare(unwindSeconds = 0) {
  const marker = `/tmp/tw-prep-${randomBytes(6).toString('hex')}`;
  const trap = unwindSeconds > 0 ? `trap "sleep ${unwindSeconds}; exit 143" TERM; ` : '';
  return {
    type: 'process',
    command: 'true',
    marker,
    prepare: { command: 'sh', args: ['-c', `test -f ${marker} && exit 0; ${trap}touch ${marker}; sleep 60 & wait`] },
  };
}

async function family(adapter: Record<string, unknown>) {
  const { marker, ...agentAdapter } = adapter;
  const c = await seedCompany(h);
  const agent = await c.agent(agentAdapter);
  const preparing = () => eventually('prepare step running', async () => existsSync(marker as string));
  const parent = await c.issue({ title: 'parent' });
  const child = await c.issue({
    title: 'child',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  return { c, agent, parent, child, preparing };
}

const runsOf = (issueId: string) => h.services.db.run.findMany({ where: { issueId }, orderBy: { createdAt: 'asc' } });
const resumedRuns = async (issueId: string) =>
  (await runsOf(issueId)).filter((r) => r.wakeReason === 'issue_tree_resumed');

async function wakeRunning(token: string, issueId: string) {
  const wake = await h.request('POST', `/api/issues/${issueId}/wake`, token, {});
  expect(wake.status).toBe(202);
  await eventually(
    'run running',
    async () => (await h.services.db.run.findUnique({ where: { id: wake.body.runId } }))?.status === 'running',
  );
  return wake.body.runId as string;
}

async function pause(token: string, issueId: string) {
  const r = await h.request('POST', `/api/issues/${issueId}/tree-holds`, token, { mode: 'pause' });
  expect(r.status).toBe(201);
  return r.body as { id: string; members: { issueId: string; interruptedRunId: string | null }[] };
}

const release = (token: string, issueId: string, holdId: string, body: unknown = {}) =>
  h.request('POST', `/api/issues/${issueId}/tree-holds/${holdId}/release`, token, body);

const settled = (runId: string) =>
  eventually(`run ${runId} settled`, async () => {
    const run = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
    return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : null;
  });

/** A child whose run the pause interrupted and that has settled: its resume is owed on release. */
async function interruptedChild() {
  const { c, parent, child, preparing } = await family(slowFirstPrepare());
  const runId = await wakeRunning(c.token, child.id);
  await preparing(); // its first prepare began: the pause stops it there, and a resumed run passes through
  const hold = await pause(c.token, parent.id);
  await settled(runId);
  // its workflow's end: the settlement's own resume check (a release during the stop) is done, not still racing
  await h.services.client.workflow.getHandle(workflowId.agentRun(runId)).result();
  return { c, parent, child, runId, hold };
}

/** Fault injection: Temporal refuses to start any run's workflow while `body` runs. */
async function whileRunStartsFail(body: () => Promise<void>) {
  const orchestrator = h.services.orchestrator;
  const startRun = orchestrator.startRun;
  orchestrator.startRun = async () => {
    throw new Error('temporal frontend unavailable');
  };
  try {
    await body();
  } finally {
    orchestrator.startRun = startRun;
  }
}

test('a run paused in preparation resumes exactly once; a second release is 409', async () => {
  const { c, parent, child, preparing } = await family(slowFirstPrepare());
  const runId = await wakeRunning(c.token, child.id);
  await preparing(); // its first prepare began: the pause stops it there, and a resumed run passes through
  const hold = await pause(c.token, parent.id);
  expect(hold.members.find((m) => m.issueId === child.id)?.interruptedRunId).toBe(runId);
  const stopped = await settled(runId);
  expect(stopped).toMatchObject({
    status: 'cancelled',
    stopKind: 'operator_hold',
    stoppedByHoldId: hold.id,
    adapterEntered: false,
  });
  expect(await h.services.db.executionBlocker.count({ where: { issueId: child.id } })).toBe(0);
  expect((await h.request('GET', `/api/issues/${child.id}`, c.token)).body.status).toBe('in_progress');
  expect(await resumedRuns(child.id)).toHaveLength(0);

  const first = await release(c.token, parent.id, hold.id);
  expect(first.status).toBe(200);
  expect(first.body.resumed).toHaveLength(1);
  expect(first.body.resumed[0].issueId).toBe(child.id);
  const resumed = await settled(first.body.resumed[0].runId);
  expect(resumed).toMatchObject({
    status: 'succeeded',
    wakeReason: 'issue_tree_resumed',
    directive: { holdId: hold.id, interruptedRunId: runId },
  });
  // a run identity of its own: the interrupted run, stopped before its agent, never held a token; the resumed one
  // holds its own (minted for it, revoked when it settled)
  expect(await h.services.db.apiToken.findUnique({ where: { runId } })).toBeNull();
  const resumedToken = await h.services.db.apiToken.findUniqueOrThrow({ where: { runId: resumed.id } });
  expect(resumedToken).toMatchObject({ kind: 'run', runId: resumed.id, revokedAt: expect.any(Date) });
  const second = await release(c.token, parent.id, hold.id);
  expect(second.status).toBe(409);
  expect(second.body).toEqual({ error: { code: 'conflict', message: `tree hold ${hold.id} is not active` } });
  expect(await resumedRuns(child.id)).toHaveLength(1);
});

test('a release reads its hold once: the route scopes it, the compare-and-set returns it, the answer shows it', async () => {
  const { c, parent, child, hold } = await interruptedChild();
  const { result: answer, sent } = await statementsSentDuring(() => release(c.token, parent.id, hold.id));
  expect(answer.status).toBe(200);
  expect(answer.body.resumed.map((r: { issueId: string }) => r.issueId)).toEqual([child.id]);
  const holdReads = sent.filter((s) => /^\s*SELECT "public"\."TreeHold"\./.test(s.text) && s.values.includes(hold.id));
  // the API's scope check and its answer; the release itself (its fan-out slot, its compare-and-set) reads none
  expect(holdReads.map((s) => s.text.replace(/\s+/g, ' ').slice(0, 60))).toHaveLength(2);
  const released = sent.filter((s) => /^\s*UPDATE "public"\."TreeHold"[\s\S]*RETURNING/.test(s.text));
  expect(released.length).toBeGreaterThanOrEqual(1);
});

test('a release refused by the database (released outside the workflow) is the same 409, and the workflow completes', async () => {
  const { c, parent, child, hold } = await interruptedChild();
  const releasedElsewhere = { status: 'released' as const, releaseResult: { releaseId: randomUUID() } };
  await h.services.db.treeHold.update({ where: { id: hold.id }, data: releasedElsewhere });
  const r = await release(c.token, parent.id, hold.id);
  expect(r.status).toBe(409);
  expect(r.body).toEqual({ error: { code: 'conflict', message: `tree hold ${hold.id} is not active` } });
  expect(await resumedRuns(child.id)).toHaveLength(0);
  // the hold's workflow does not wait for a release that can no longer come
  const handle = h.services.client.workflow.getHandle(workflowId.treeHold(hold.id));
  expect(await handle.result()).toMatchObject({ releasedOutside: true, released: null });
  expect((await handle.describe()).typedSearchAttributes.get(StateKey)).toBe('released');
  const again = await release(c.token, parent.id, hold.id);
  expect(again.status).toBe(409);
});

test('a release before the stop finished unwinding resumes once, after the run settles', async () => {
  const { c, parent, child, preparing } = await family(slowFirstPrepare(15));
  const runId = await wakeRunning(c.token, child.id);
  await preparing();
  const hold = await pause(c.token, parent.id);
  const early = await release(c.token, parent.id, hold.id);
  expect(early.status).toBe(200);
  const atRelease = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
  expect(atRelease.status).toBe('running');
  expect(early.body.resumed).toHaveLength(0);
  await settled(runId);
  const [resumed] = await eventually('the late resume', async () => {
    const runs = await resumedRuns(child.id);
    return runs.length > 0 ? runs : null;
  });
  await settled(resumed.id);
  expect(await resumedRuns(child.id)).toHaveLength(1);
});

test('overlapping child and parent pauses resume only after the last release', async () => {
  const { c, parent, child, preparing } = await family(slowFirstPrepare());
  const runId = await wakeRunning(c.token, child.id);
  await preparing(); // its first prepare began: the pause stops it there, and a resumed run passes through
  const childHold = await pause(c.token, child.id);
  const parentHold = await pause(c.token, parent.id);
  await settled(runId);
  const r1 = await release(c.token, child.id, childHold.id);
  expect(r1.status).toBe(200);
  expect(r1.body.resumed).toHaveLength(0);
  expect(await resumedRuns(child.id)).toHaveLength(0);
  const r2 = await release(c.token, parent.id, parentHold.id);
  expect(r2.body.resumed).toHaveLength(1);
  expect(await resumedRuns(child.id)).toHaveLength(1);
});

test('a queued run cancelled by the pause resumes once', async () => {
  const { c, agent, parent, child } = await family({ type: 'noop' });
  // the window between dispatch and the run's first step: a queued run whose workflow has not begun
  const queued = await h.services.db.run.create({
    data: {
      companyId: c.companyId,
      issueId: child.id,
      agentId: agent.id,
      wakeReason: 'manual_wake',
      wakeRequestId: (
        await h.services.db.wakeRequest.create({
          data: {
            companyId: c.companyId,
            agentId: agent.id,
            issueId: child.id,
            reason: 'manual_wake',
            status: 'claimed',
          },
        })
      ).id,
    },
  });
  const hold = await pause(c.token, parent.id);
  expect((await h.services.db.run.findUniqueOrThrow({ where: { id: queued.id } })).status).toBe('cancelled');
  const r = await release(c.token, parent.id, hold.id);
  expect(r.body.resumed).toHaveLength(1);
  expect(await settled(r.body.resumed[0].runId)).toMatchObject({ status: 'succeeded' });
  expect(await resumedRuns(child.id)).toHaveLength(1);
});

test('a task reassigned during the hold does not resume', async () => {
  const { c, parent, child, preparing } = await family(slowFirstPrepare());
  const other = await c.agent({ type: 'noop' });
  const runId = await wakeRunning(c.token, child.id);
  await preparing(); // its first prepare began: the pause stops it there, and a resumed run passes through
  const hold = await pause(c.token, parent.id);
  await settled(runId);
  expect((await h.request('PATCH', `/api/issues/${child.id}`, c.token, { assigneeAgentId: other.id })).status).toBe(
    200,
  );
  const r = await release(c.token, parent.id, hold.id);
  expect(r.body.resumed).toHaveLength(0);
  expect(await resumedRuns(child.id)).toHaveLength(0);
});

test('a mid-turn stop with unknown outcome is not replayed; the blocker stays and the skip is logged', async () => {
  const { c, parent, child } = await family({ type: 'process', command: 'sleep', args: ['60'] });
  const runId = await wakeRunning(c.token, child.id);
  await eventually(
    'adapter entered',
    async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).adapterEntered,
  );
  const hold = await pause(c.token, parent.id);
  await settled(runId);
  const blocker = await h.services.db.executionBlocker.findFirstOrThrow({
    where: { issueId: child.id, status: 'active' },
  });
  expect(blocker.nextAction).toContain(runId);
  const r = await release(c.token, parent.id, hold.id);
  expect(r.body.resumed).toHaveLength(0);
  expect(r.body.skipped).toEqual([{ issueId: child.id, reason: 'execution_blocker' }]);
  expect(
    await h.services.db.activityLog.count({ where: { action: 'issue.tree_resume_wake_skipped', entityId: child.id } }),
  ).toBe(1);
  expect(await resumedRuns(child.id)).toHaveLength(0);
  expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(0);
});

test('twenty concurrent releases give one 200 and one resumed run per interrupted task', async () => {
  const c = await seedCompany(h);
  const parent = await c.issue({ title: 'parent' });
  const children = [];
  for (let i = 0; i < 3; i++) {
    const { marker: _marker, ...adapter } = slowFirstPrepare();
    const agent = await c.agent(adapter);
    children.push(
      await c.issue({ title: `child ${i}`, parentId: parent.id, assigneeAgentId: agent.id, status: 'todo' }),
    );
  }
  const runIds = [];
  for (const child of children) runIds.push(await wakeRunning(c.token, child.id));
  const hold = await pause(c.token, parent.id);
  for (const id of runIds) await settled(id);
  const results = await Promise.all(Array.from({ length: 20 }, () => release(c.token, parent.id, hold.id)));
  expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  expect(results.filter((r) => r.status === 409)).toHaveLength(19);
  for (const child of children) expect(await resumedRuns(child.id)).toHaveLength(1);
});

test('a failed wake returns the claim; the hold retries and the task resumes once', async () => {
  const { c, parent, child, runId, hold } = await interruptedChild();
  await whileRunStartsFail(async () => {
    const r = await release(c.token, parent.id, hold.id);
    expect(r.status).toBe(200);
    expect(r.body.resumed).toEqual([]);
    expect(r.body.wakeFailures).toEqual([
      { issueId: child.id, message: expect.stringContaining('temporal frontend unavailable') },
    ]);
    expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(0);
  });
  const [resumed] = await eventually('the retried resume', async () => {
    const runs = await resumedRuns(child.id);
    return runs.length ? runs : null;
  });
  expect(await settled(resumed.id)).toMatchObject({ status: 'succeeded' });
  const state = await h.services.client.workflow.getHandle(workflowId.treeHold(hold.id)).query(holdStateQuery);
  expect(state.resumeRetries).toBeGreaterThanOrEqual(1);
  expect(await resumedRuns(child.id)).toHaveLength(1);
  expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(1);
});

test('resume wakes that keep failing are retried a bounded number of times, then the hold workflow fails', async () => {
  const { c, parent, child, runId, hold } = await interruptedChild();
  const handle = h.services.client.workflow.getHandle(workflowId.treeHold(hold.id));
  await whileRunStartsFail(async () => {
    const r = await release(c.token, parent.id, hold.id);
    expect(r.status).toBe(200);
    expect(r.body.wakeFailures).toHaveLength(1);
    const failure = await handle.result().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const exhausted = { type: 'ResumeRetriesExhausted', message: '1 resume wakes still failing after 2 retries' };
    expect((failure as WorkflowFailedError).cause).toMatchObject(exhausted);
  });
  const description = await handle.describe();
  expect(description.status.name).toBe('FAILED');
  expect(description.typedSearchAttributes.get(StateKey)).toBe('resume_retries_exhausted');
  expect(await handle.query(holdStateQuery)).toMatchObject({ resumeRetries: 2, pendingWakeFailures: 1 });
  // the obligation stays owed (no claim): a later release or a resolved blocker can still dispatch it
  expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(0);
  expect(await resumedRuns(child.id)).toHaveLength(0);
});

test('a hold of 200 members releases with every owed resume exactly once', async () => {
  const MEMBERS = 200;
  const c = await seedCompany(h);
  const agent = await c.agent();
  const root = await c.issue({ title: 'two hundred tasks' });
  // setup at scale straight into the database: assigned tasks, each with a run queued (claimed wake, workflow not
  // yet started), the state a pause finds mid-dispatch. 200 cross the release's decision chunks (60) and the
  // company's cap (64); `npm run bench` (release-fanout) releases 1,000 and counts exactly-once violations.
  const children = Array.from({ length: MEMBERS }, (_, i) => ({
    id: randomUUID(),
    companyId: c.companyId,
    parentId: root.id,
    title: `task ${i}`,
    status: 'in_progress' as const,
    assigneeAgentId: agent.id,
  }));
  await h.services.db.issue.createMany({ data: children });
  const wakes = children.map((issue) => ({
    id: randomUUID(),
    companyId: c.companyId,
    agentId: agent.id,
    issueId: issue.id,
    reason: 'assignment',
    status: 'claimed' as const,
  }));
  await h.services.db.wakeRequest.createMany({ data: wakes });
  await h.services.db.run.createMany({
    data: wakes.map((w) => ({
      companyId: c.companyId,
      agentId: agent.id,
      issueId: w.issueId,
      wakeRequestId: w.id,
      wakeReason: w.reason,
    })),
  });

  const hold = await pause(c.token, root.id);
  expect(hold.members.filter((m) => m.interruptedRunId)).toHaveLength(MEMBERS);
  const r = await release(c.token, root.id, hold.id);
  expect(r.status).toBe(200);
  expect(r.body.resumed).toHaveLength(MEMBERS);
  expect(r.body.wakeFailures).toEqual([]);
  const ids = children.map((x) => x.id);
  expect(await h.services.db.resumeClaim.count({ where: { holdId: hold.id } })).toBe(MEMBERS);
  const perIssue = await h.services.db.run.groupBy({
    by: ['issueId'],
    where: { issueId: { in: ids }, wakeReason: 'issue_tree_resumed' },
    _count: true,
  });
  expect(perIssue).toHaveLength(MEMBERS);
  expect(perIssue.every((g) => g._count === 1)).toBe(true);
  // a liveness bound, not a timing claim: all the runs execute on this one test worker, beside whatever else loads the box
  await eventually(
    'every resumed run finished',
    async () =>
      (await h.services.db.run.count({
        where: { issueId: { in: ids }, wakeReason: 'issue_tree_resumed', status: 'succeeded' },
      })) === MEMBERS,
    600_000,
  );
}, 900_000);

test('wakeAgents wakes only todo, in_progress and in_review members', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent();
  const root = await c.issue({ title: 'root' });
  const statuses = ['backlog', 'todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled'];
  const issues = [];
  for (const status of statuses)
    issues.push(await c.issue({ title: status, parentId: root.id, assigneeAgentId: agent.id, ...moveTo(status) }));
  const hold = await pause(c.token, root.id);
  const r = await release(c.token, root.id, hold.id, { wakeAgents: true });
  expect(r.status).toBe(200);
  const woken = await h.services.db.wakeRequest.findMany({
    where: { reason: 'issue_tree_released' },
    include: { issue: true },
  });
  expect(
    woken
      .filter((w) => w.issue.companyId === c.companyId)
      .map((w) => w.issue.status)
      .sort(),
  ).toEqual(['in_progress', 'in_review', 'todo']);
});

test('while paused: wakes are deferred, new children are covered, board comments get 409, other trees run', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent();
  const root = await c.issue({ title: 'paused root' });
  const other = await c.issue({ title: 'free', assigneeAgentId: agent.id });
  const hold = await pause(c.token, root.id);
  const late = await c.issue({ title: 'born paused', parentId: root.id, assigneeAgentId: agent.id });
  const deferred = await h.request('POST', `/api/issues/${late.id}/wake`, c.token, {});
  expect(deferred.body).toMatchObject({ status: 'queued', outcome: 'deferred', holdIds: [hold.id] });
  const comment = await h.request('POST', `/api/issues/${late.id}/comments`, c.token, { body: 'go on' });
  expect(comment.status).toBe(409);
  expect(comment.body.error.message).toContain('resume');
  const free = await h.request('POST', `/api/issues/${other.id}/wake`, c.token, {});
  expect(await settled(free.body.runId)).toMatchObject({ status: 'succeeded' });
  expect(await runsOf(late.id)).toHaveLength(0);
  const resumed = await h.request('POST', `/api/issues/${root.id}/tree-holds`, c.token, { mode: 'resume' });
  expect(resumed.status).toBe(200);
  const [run] = await eventually('deferred wake dispatched', async () => {
    const runs = await runsOf(late.id);
    return runs.length ? runs : null;
  });
  expect(await settled(run.id)).toMatchObject({ status: 'succeeded' });
  expect((await h.request('GET', `/api/tree-holds/${hold.id}`, c.token)).body.status).toBe('released');
});

/** On its stop, reports with its own token what it got done (a comment, a status with a comment), then exits. */
const REPORTING_AGENT = `report() {
  trap '' TERM
  api="$TREEWARDEN_API_URL/api/issues/$TREEWARDEN_ISSUE_ID"; auth="authorization: Bearer $TREEWARDEN_RUN_TOKEN"
  post() { curl -s -o /dev/null -w '%{http_code}' -X "$1" -H "$auth" -H 'content-type: application/json' -d "$2" "$3"; }
  c=$(post POST '{"body":"partial: 3 of 5 tables migrated"}' "$api/comments")
  u=$(post PATCH '{"status":"in_review","comment":"stopped by the pause after 3 of 5"}' "$api")
  echo "reported: comment $c, update $u"; exit 0
}
trap report TERM; echo ready; sleep 600 & wait`;

test('while paused, an interrupted agent still reports its results (seed 002); a person’s new message is 409', async () => {
  const { c, parent, child } = await family({ type: 'process', command: 'sh', args: ['-c', REPORTING_AGENT] });
  const runId = await wakeRunning(c.token, child.id);
  const output = () => readFileSync(runFiles(runId, null).output, 'utf8');
  await eventually(
    'the agent at work',
    async () => existsSync(runFiles(runId, null).output) && output().includes('ready'),
  );

  const hold = await pause(c.token, parent.id);
  expect(await settled(runId)).toMatchObject({ stopKind: 'operator_hold', stoppedByHoldId: hold.id });
  expect(output()).toContain('reported: comment 201, update 200');
  const reports = await h.services.db.comment.findMany({ where: { issueId: child.id, runId } });
  expect(reports.map((r) => r.body).sort()).toEqual([
    'partial: 3 of 5 tables migrated',
    'stopped by the pause after 3 of 5',
  ]);
  expect((await h.services.db.issue.findUniqueOrThrow({ where: { id: child.id } })).status).toBe('in_review');
  const board = await h.request('POST', `/api/issues/${child.id}/comments`, c.token, { body: 'keep going' });
  expect(board.status).toBe(409);
  expect((await release(c.token, parent.id, hold.id)).status).toBe(200);
});

test('bad input: malformed ids 400, foreign ids 404, bad bodies 400, nothing changes', async () => {
  const a = await seedCompany(h);
  const b = await seedCompany(h);
  const root = await a.issue({ title: 'root' });
  const hold = await pause(a.token, root.id);
  expect((await h.request('POST', `/api/issues/${root.id}/tree-holds/nope/release`, a.token, {})).status).toBe(400);
  expect((await h.request('POST', `/api/issues/${root.id}/tree-holds/${hold.id}/release`, b.token, {})).status).toBe(
    404,
  );
  expect((await h.request('GET', `/api/tree-holds/${hold.id}`, b.token)).status).toBe(404);
  expect((await h.request('POST', `/api/issues/${root.id}/tree-holds`, a.token, { mode: 'freeze' })).status).toBe(400);
  expect(
    (await h.request('POST', `/api/issues/${root.id}/tree-holds/${hold.id}/release`, a.token, { wakeAgents: 'yes' }))
      .status,
  ).toBe(400);
  expect((await h.request('GET', `/api/tree-holds/${hold.id}`, a.token)).body.status).toBe('active');
  const list = await h.request('GET', `/api/issues/${root.id}/tree-holds`, a.token);
  expect(list.body.items.map((x: { id: string }) => x.id)).toEqual([hold.id]);
});

describe('dispatches share the company scheduling lock; holds take it alone', () => {
  const queuedWake = (companyId: string, agentId: string, issueId: string) =>
    h.services.db.$transaction(
      async (tx) => (await createWake(tx, { companyId, agentId, issueId, reason: 'assignment' })).wake.id,
    );

  test('eight racing dispatches of one wake start one run', async () => {
    const c = await seedCompany(h);
    const agent = await c.agent();
    const issue = await c.issue({ title: 'one wake', assigneeAgentId: agent.id, status: 'in_progress' });
    const wakeId = await queuedWake(c.companyId, agent.id, issue.id);
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => dispatchWake(h.services, wakeId)));
    expect(outcomes.filter((o) => o.kind === 'dispatched')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'not_queued')).toHaveLength(7);
    expect(await runsOf(issue.id)).toHaveLength(1);
  });

  test('a pause racing a burst of dispatches misses none of their runs', async () => {
    const c = await seedCompany(h);
    const agent = await c.agent({ type: 'process', command: 'sleep', args: ['60'] });
    const parent = await c.issue({ title: 'parent' });
    const children = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        c.issue({ title: `child ${i}`, parentId: parent.id, assigneeAgentId: agent.id, status: 'in_progress' }),
      ),
    );
    const wakeIds = await Promise.all(children.map((child) => queuedWake(c.companyId, agent.id, child.id)));
    const [hold] = await Promise.all([pause(c.token, parent.id), ...wakeIds.map((id) => dispatchWake(h.services, id))]);
    // every run a dispatch created is the hold's to stop: dispatched before it (stopped by it) or never (deferred)
    for (const child of children) {
      for (const run of await runsOf(child.id))
        expect(await settled(run.id)).toMatchObject({ status: 'cancelled', stoppedByHoldId: hold.id });
    }
  });
});
