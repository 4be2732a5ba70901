/**
 * @module The change outbox (issue 26): a material write records its change in its own transaction, and a worker's
 * dispatcher signals the watchdogs above it, so a change outlives the process that made it and a failed round is
 * delivered by a later one. Bookkeeping (a title, a comment) records and signals nothing. The watchdogs' safety
 * tick is an hour here: every evaluation below comes from a delivered change.
 */
import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { startChangeDispatcher } from '../changes/dispatcher';
import { workflowId } from '../domain/ids';
import { createWorker, type TreewardenWorker } from '../workers/create-worker';
import { watchdogStateQuery } from '../workflows/definitions';
import { subtreeChangeReasons } from '../testing/change-signals';
import { eventually, seedCompany, startHarness, workflowBundle, type Harness } from '../testing/harness';
import { testStack } from '../testing/stack';
import { BLOCKED } from './support/blocked';

let h: Harness;
let connection: NativeConnection;
let worker: TreewardenWorker;
let polling: Promise<unknown>;
beforeAll(async () => {
  // no in-process worker: the one below polls without its dispatchers, which each test starts as it needs
  h = await startHarness(
    { TREEWARDEN_WATCHDOG_TICK_MS: '3600000', TREEWARDEN_FIRST_RUN_GRACE_MS: '1' },
    { inProcessWorker: false },
  );
  connection = await NativeConnection.connect({ address: testStack().temporalAddress });
  worker = await createWorker(h.services, { connection, workflowBundle: await workflowBundle() });
  polling = Promise.all([worker.shared.run(), worker.agents.run(), worker.host.run()]);
});
afterAll(async () => {
  worker?.shutdown();
  await polling;
  await connection?.close();
  await h?.close();
});

const pendingChanges = () => h.services.db.subtreeChange.count();

/** Undelivered changes naming any of `issueIds` (other tests' trees keep changing in the background). */
const changesOf = (...issueIds: string[]) =>
  h.services.db.subtreeChange.count({ where: { issueIds: { hasSome: issueIds } } });

const watchdogWakes = (watchdogId: string) =>
  h.services.db.wakeRequest.count({
    where: { reason: 'task_watchdog_stopped_subtree', idempotencyKey: { startsWith: `task_watchdog:${watchdogId}:` } },
  });

const watchdogState = (issueId: string) =>
  h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).query(watchdogStateQuery);

/** The reasons of every `subtreeChanged` signal in the watchdog workflow's history, oldest first. */
const changeSignals = (issueId: string) =>
  subtreeChangeReasons(h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)));

/** A watched root with one done leaf (a stopped subtree), its watchdog woken once by a dispatcher of its own. */
async function wokenWatchedTree() {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const root = await c.issue({ title: 'ship feature' });
  const leaf = await c.issue({ title: 'write code', parentId: root.id, status: 'done' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  expect(put.status).toBe(201);
  const watchdogId: string = put.body.id;
  const dispatcher = startChangeDispatcher(h.services, 200);
  try {
    await eventually('the first wake', async () => (await watchdogWakes(watchdogId)) === 1);
    // the review run it woke has started and ended, and those changes were delivered too
    await eventually('the review run settled and delivered', async () => {
      const runs = await h.services.db.run.findMany({ where: { agentId: watcher.id } });
      return runs.length === 1 && runs[0].finishedAt !== null && (await pendingChanges()) === 0;
    });
  } finally {
    await dispatcher.stop();
  }
  return { c, watcher, root, leaf, watchdogId };
}

test('a committed material write that nobody signalled reaches its watchdog once a dispatcher runs', async () => {
  const { c, root, leaf, watchdogId } = await wokenWatchedTree();
  const before = await watchdogState(root.id);
  // no dispatcher runs anywhere: as if the API process died right after its commit
  expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED)).status).toBe(200);
  expect(await changesOf(leaf.id)).toBe(1);
  expect((await watchdogState(root.id)).changesReceived).toBe(before.changesReceived);

  const dispatcher = startChangeDispatcher(h.services, 200);
  try {
    await eventually('the wake for the new stop', async () => (await watchdogWakes(watchdogId)) === 2);
    await eventually('the change row delivered', async () => (await changesOf(leaf.id)) === 0);
    // a round coalesces what it finds: the PATCH's change may share its signal with another one
    expect((await changeSignals(root.id)).some((reasons) => reasons.split(',').includes('issue_updated'))).toBe(true);
  } finally {
    await dispatcher.stop();
  }
});

test('a round whose signals fail keeps its changes, and a later round delivers each to its watchdog', async () => {
  const trees = [await wokenWatchedTree(), await wokenWatchedTree()];
  const failures: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void failures.push(line) });
  let temporalDown = true;
  const orchestrator = {
    ...h.services.orchestrator,
    subtreeChanged: async (...args: Parameters<typeof h.services.orchestrator.subtreeChanged>) => {
      if (temporalDown) throw new Error('Temporal is unreachable');
      await h.services.orchestrator.subtreeChanged(...args);
    },
  };
  const dispatcher = startChangeDispatcher({ ...h.services, log, orchestrator }, 200);
  try {
    for (const { c, leaf } of trees)
      expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED)).status).toBe(200);
    await eventually(
      'two failed rounds',
      async () => failures.filter((line) => line.includes('delivering subtree changes')).length >= 2,
    );
    // kept, and not delivered: no signal of the PATCH in either watchdog's history. (Its wake count proves
    // nothing here: a signal of the setup's review run, delivered before the PATCH, may be evaluated after it and
    // see the new stop; that is one wake for a real stop, not a delivery.)
    for (const { leaf, root } of trees) {
      expect(await changesOf(leaf.id)).toBe(1);
      expect((await changeSignals(root.id)).some((reasons) => reasons.split(',').includes('issue_updated'))).toBe(
        false,
      );
    }

    temporalDown = false;
    for (const { watchdogId } of trees)
      await eventually('the wake for the new stop', async () => (await watchdogWakes(watchdogId)) === 2);
    const leafIds = trees.map((t) => t.leaf.id);
    await eventually('every change row delivered', async () => (await changesOf(...leafIds)) === 0);
    for (const { root } of trees)
      expect((await changeSignals(root.id)).some((reasons) => reasons.split(',').includes('issue_updated'))).toBe(true);
  } finally {
    await dispatcher.stop();
  }
});

test('a PATCH records a change only when it changes the status, the assignee or the blockers', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent();
  const issue = await c.issue({ title: 'a task', status: 'todo' });
  const other = await c.issue({ title: 'another task' });
  const patch = async (body: Record<string, unknown>) => {
    const before = await changesOf(issue.id);
    expect((await h.request('PATCH', `/api/issues/${issue.id}`, c.token, body)).status).toBe(200);
    return (await changesOf(issue.id)) - before;
  };
  expect(await patch({ title: 'a renamed task' })).toBe(0);
  expect(await patch({ comment: 'a note' })).toBe(0);
  expect(await patch({ status: 'todo', comment: 'still to do' })).toBe(0);
  expect((await h.request('POST', `/api/issues/${issue.id}/comments`, c.token, { body: 'hello' })).status).toBe(201);
  expect(await changesOf(issue.id)).toBe(1); // its creation only
  expect(await patch({ status: 'in_progress' })).toBe(1);
  expect(await patch({ assigneeAgentId: agent.id })).toBe(1);
  expect(await patch({ blockedByIssueIds: [other.id] })).toBe(1);
  expect(await patch({ blockedByIssueIds: [other.id] })).toBe(0);
  const recorded = await h.services.db.subtreeChange.findMany({ orderBy: { id: 'desc' }, take: 1 });
  expect(recorded[0]).toMatchObject({ reason: 'issue_updated' });
  expect(new Set(recorded[0].issueIds)).toEqual(new Set([issue.id, other.id]));
  await h.services.db.subtreeChange.deleteMany({ where: { issueIds: { hasSome: [issue.id, other.id] } } });
});

test('a title edit and a comment under a watched issue signal nothing', async () => {
  const { c, root, leaf } = await wokenWatchedTree();
  const dispatcher = startChangeDispatcher(h.services, 200);
  try {
    const before = await changeSignals(root.id);
    expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { title: 'write more code' })).status).toBe(
      200,
    );
    expect((await h.request('POST', `/api/issues/${leaf.id}/comments`, c.token, { body: 'a note' })).status).toBe(201);
    expect((await h.request('PATCH', `/api/issues/${root.id}`, c.token, { comment: 'another note' })).status).toBe(200);
    // a material change recorded after them: the one dispatcher delivers in order, so once this one has arrived,
    // any change the bookkeeping had recorded would have arrived with it (coalesced) or before it
    const opened = await h.request('POST', `/api/issues/${leaf.id}/interactions`, c.token, { kind: 'question' });
    expect(opened.status).toBe(201);
    const signals = await eventually('the interaction signalled', async () => {
      const since = (await changeSignals(root.id)).slice(before.length);
      const interaction = since.findIndex((reason) => reason.includes('interaction_created'));
      return interaction >= 0 ? since.slice(0, interaction + 1) : null;
    });
    // whatever else a round coalesced with it (a review run's end), nothing of the bookkeeping arrived
    const reasons = signals.flatMap((r) => r.split(','));
    expect(reasons).toContain('interaction_created');
    expect(reasons.filter((r) => r === 'issue_updated' || r === 'comment_added')).toEqual([]);
  } finally {
    await dispatcher.stop();
  }
});
