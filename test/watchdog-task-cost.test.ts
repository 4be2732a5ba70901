/**
 * @module What a watchdog costs Temporal (issue 26, items 3 and 4), read from real workflow histories: an idle
 * watchdog evaluates an isolated change in the workflow task that delivers it (a local activity: no debounce timer,
 * no activity task), and a safety tick with nothing changed since the last evaluation asks one question of the
 * database instead of reading the subtree, until a recorded change reaches the watchdog.
 */
import type { temporal } from '@temporalio/proto';
import { workflowId } from '../domain/ids';
import { watchdogStateQuery } from '../workflows/definitions';
import type { TaskWatchdogInput } from '../workflows/task-watchdog';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  // the safety tick is an hour: the first test's evaluations come from its change alone
  h = await startHarness({ TREEWARDEN_WATCHDOG_TICK_MS: '3600000', TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
});
afterAll(async () => {
  await h?.close();
});

type Event = temporal.api.history.v1.IHistoryEvent;
const handleOf = (issueId: string) => h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId));
const events = async (issueId: string): Promise<Event[]> => (await handleOf(issueId).fetchHistory()).events ?? [];

/** A watched root with one child in progress, its watchdog evaluated and at rest. */
async function watchedTree() {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const root = await c.issue({ title: 'watched' });
  const child = await c.issue({ title: 'child', parentId: root.id, status: 'in_progress' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  expect(put.status).toBe(201);
  await quiet(root.id, c.companyId);
  return { c, root, child, watchdogId: put.body.id as string };
}

/**
 * Until the watchdog is at rest: its review run (if it woke one) has ended, every recorded change is delivered and
 * evaluated, and its history no longer grows.
 */
async function quiet(issueId: string, companyId: string) {
  let length = -1;
  await eventually('the watchdog at rest', async () => {
    const state = await handleOf(issueId).query(watchdogStateQuery);
    const pending = (await handleOf(issueId).describe()).raw.pendingActivities?.length ?? 0;
    const open = await h.services.db.run.count({ where: { companyId, status: { in: ['queued', 'running'] } } });
    const undelivered = await h.services.db.subtreeChange.count();
    const now = (await events(issueId)).length;
    const still = now === length;
    length = now;
    if (!still) await new Promise((r) => setTimeout(r, 500));
    return still && state.evaluations >= 1 && state.pendingChanges === 0 && pending === 0 && open + undelivered === 0;
  });
}

test('an isolated change to an idle watchdog costs one workflow task: no debounce timer, no activity task', async () => {
  const { c, root, child } = await watchedTree();
  const before = await handleOf(root.id).query(watchdogStateQuery);
  const seen = (await events(root.id)).length;
  const patch = await h.request('PATCH', `/api/issues/${child.id}`, c.token, { status: 'in_review' });
  expect(patch.status).toBe(200);
  await eventually(
    'the change evaluated',
    async () => (await handleOf(root.id).query(watchdogStateQuery)).evaluations > before.evaluations,
  );
  // from the change's signal to its evaluation (the local activity's marker, recorded by the task that completes)
  const after = (await events(root.id)).slice(seen);
  const signal = after.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
  const marker = after.findIndex((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
  expect(signal).toBeGreaterThanOrEqual(0);
  expect(marker).toBeGreaterThan(signal);
  const path = after.slice(signal, marker + 1);
  expect(path.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
  expect(path.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
  expect(path.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
});

test("a waking change costs one signal and one workflow task: its review run's start and end signal nothing", async () => {
  const { c, root, child, watchdogId } = await watchedTree();
  const seen = (await events(root.id)).length;
  const patch = await h.request('PATCH', `/api/issues/${child.id}`, c.token, {
    status: 'blocked',
    blockedReason: 'waits for the test',
  });
  expect(patch.status).toBe(200);
  await eventually(
    'the review run woken',
    async () => (await h.services.db.run.count({ where: { companyId: c.companyId } })) > 0,
  );
  await quiet(root.id, c.companyId);
  const [run] = await h.services.db.run.findMany({ where: { reviewWatchdogId: watchdogId } });
  expect(run.status).toBe('succeeded');
  // both were recorded and delivered: the liveness watch and every other reader of the outbox still see them
  const after = (await events(root.id)).slice(seen);
  expect(after.filter((e) => e.workflowExecutionSignaledEventAttributes)).toHaveLength(1);
  expect(after.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
  // one evaluation, and no debounce timer fired for a later one
  expect(after.filter((e) => e.markerRecordedEventAttributes)).toHaveLength(1);
  expect(after.filter((e) => e.timerFiredEventAttributes)).toEqual([]);
  const row = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } });
  expect(row.evaluatedChangeVersion).toBe(row.changeVersion);
});

test('a safety tick with nothing changed reads nothing more; one after a recorded change evaluates', async () => {
  const { c, root, watchdogId } = await watchedTree();
  // the same watchdog under a one-second tick: a fresh run that evaluates once at start, then ticks
  const input: TaskWatchdogInput = { watchdogId, issueId: root.id, tickMs: 1_000, debounceMs: 1 };
  await h.services.client.workflow.start('taskWatchdogWorkflow', {
    workflowId: workflowId.taskWatchdog(root.id),
    taskQueue: h.env.TREEWARDEN_TASK_QUEUE,
    args: [input],
    workflowIdConflictPolicy: 'TERMINATE_EXISTING',
  });
  await quiet(root.id, c.companyId);
  const ticking = await eventually('a tick found nothing changed', async () => {
    const state = await handleOf(root.id).query(watchdogStateQuery);
    return (state.unchangedTicks ?? 0) >= 1 ? state : null;
  });
  const ticked = await eventually('two more ticks', async () => {
    const state = await handleOf(root.id).query(watchdogStateQuery);
    return (state.unchangedTicks ?? 0) >= ticking.unchangedTicks! + 2 ? state : null;
  });
  expect(ticked.evaluations).toBe(ticking.evaluations);
  // as a dispatcher round does before its signal (here the signal is lost): the tick finds the change and evaluates
  await h.services.db.watchdog.update({ where: { id: watchdogId }, data: { changeVersion: { increment: 1 } } });
  const evaluated = await eventually('the tick evaluated the change', async () => {
    const state = await handleOf(root.id).query(watchdogStateQuery);
    return state.evaluations === ticked.evaluations + 1 ? state : null;
  });
  expect(evaluated.pendingChanges).toBe(0);
  const row = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdogId } });
  expect(row.evaluatedChangeVersion).toBe(row.changeVersion);
  await handleOf(root.id).terminate('test over');
});
