/**
 * @module Every workflow task replays: the main path of each workflow type runs on a worker with
 * TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS=0, so each task rebuilds the workflow from its full history. Any divergence
 * between what the code does on replay and what it did live fails a workflow task, which this test
 * reads back from the histories; and each path's effect happened once (one wake, one resume, one settlement), from
 * the database and the activities the histories scheduled. (The variable set for any test file does the same.)
 */
import { seedCompany, startHarness, type Harness } from '../testing/harness';
import { blockerResolved, holdInterruptsRun, runFails, watchdogWakes } from '../testing/scenarios';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '5000', TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS: '0' });
});
afterAll(async () => {
  await h?.close();
});

/** The failure messages of every workflow task that failed in these executions. */
async function failedWorkflowTasks(workflowIds: string[]): Promise<string[]> {
  const failures: string[] = [];
  for (const id of workflowIds) {
    const history = await h.services.client.workflow.getHandle(id).fetchHistory();
    for (const event of history.events ?? []) {
      const failure = event.workflowTaskFailedEventAttributes?.failure;
      if (failure) failures.push(`${id}: ${failure.message}`);
    }
  }
  return failures;
}

/** How many times each execution scheduled `activityType`: a replay that re-ran one would schedule it again. */
async function scheduled(workflowIds: string[], activityType: string): Promise<number> {
  let count = 0;
  for (const id of workflowIds) {
    const history = await h.services.client.workflow.getHandle(id).fetchHistory();
    for (const event of history.events ?? [])
      if (event.activityTaskScheduledEventAttributes?.activityType?.name === activityType) count++;
  }
  return count;
}

/** The company's runs that resumed interrupted work, and their claims. */
const resumes = async (companyId: string) => ({
  runs: await h.services.db.run.count({ where: { companyId, wakeReason: 'issue_tree_resumed' } }),
  claims: await h.services.db.resumeClaim.count({ where: { interruptedRun: { companyId } } }),
});

test('watchdog: a stopped subtree wakes the agent once, removal completes the workflow', async () => {
  const c = await seedCompany(h);
  const { watchdogWorkflowId, reviewRunWorkflowId } = await watchdogWakes(h, c, { remove: true });
  expect(await failedWorkflowTasks([watchdogWorkflowId, reviewRunWorkflowId])).toEqual([]);
  const wakes = { companyId: c.companyId, reason: 'task_watchdog_stopped_subtree' };
  expect(await h.services.db.wakeRequest.count({ where: wakes })).toBe(1);
  expect(await h.services.db.run.count({ where: { companyId: c.companyId, reviewWatchdogId: { not: null } } })).toBe(1);
  expect((await h.services.client.workflow.getHandle(watchdogWorkflowId).describe()).status.name).toBe('COMPLETED');
});

test('hold: the pause stops the run, the release resumes it once', async () => {
  const c = await seedCompany(h);
  const { holdWorkflowId, stoppedRunWorkflowId, resumedRunWorkflowId } = await holdInterruptsRun(h, c, {
    release: true,
  });
  const executions = [holdWorkflowId, stoppedRunWorkflowId, resumedRunWorkflowId!];
  expect(await failedWorkflowTasks(executions)).toEqual([]);
  expect(await resumes(c.companyId)).toEqual({ runs: 1, claims: 1 });
  expect(await scheduled([holdWorkflowId], 'releaseHold')).toBe(1);
});

test('run: a failing agent command settles the run once', async () => {
  const c = await seedCompany(h);
  const { runWorkflowId } = await runFails(h, c);
  expect(await failedWorkflowTasks([runWorkflowId])).toEqual([]);
  expect(await scheduled([runWorkflowId], 'executeRun')).toBe(1);
  expect(await scheduled([runWorkflowId], 'finishRun')).toBe(1);
});

test('reconciliation: a resolved blocker dispatches its resume once', async () => {
  const c = await seedCompany(h);
  const { resolutionWorkflowId } = await blockerResolved(h, c);
  expect(await failedWorkflowTasks([resolutionWorkflowId])).toEqual([]);
  expect(await scheduled([resolutionWorkflowId], 'resumeAfterResolution')).toBe(1);
  expect(await resumes(c.companyId)).toEqual({ runs: 1, claims: 1 });
});
