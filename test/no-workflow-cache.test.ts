/**
 * @module Every workflow task replays: the main path of each workflow type runs on a worker with
 * TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS=0, so each task rebuilds the workflow from its full history. Any divergence
 * between what the code does on replay and what it did live fails a workflow task, which this test
 * reads back from the histories. (The variable set for any test file does the same.)
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

test('watchdog: a stopped subtree wakes the agent once, removal completes the workflow', async () => {
  const c = await seedCompany(h);
  const { watchdogWorkflowId, reviewRunWorkflowId } = await watchdogWakes(h, c, { remove: true });
  expect(await failedWorkflowTasks([watchdogWorkflowId, reviewRunWorkflowId])).toEqual([]);
});

test('hold: the pause stops the run, the release resumes it once', async () => {
  const c = await seedCompany(h);
  const { holdWorkflowId, stoppedRunWorkflowId, resumedRunWorkflowId } = await holdInterruptsRun(h, c, {
    release: true,
  });
  expect(await failedWorkflowTasks([holdWorkflowId, stoppedRunWorkflowId, resumedRunWorkflowId!])).toEqual([]);
});

test('run: a failing agent command settles the run once', async () => {
  const c = await seedCompany(h);
  const { runWorkflowId } = await runFails(h, c);
  expect(await failedWorkflowTasks([runWorkflowId])).toEqual([]);
});

test('reconciliation: a resolved blocker dispatches its resume once', async () => {
  const c = await seedCompany(h);
  const { resolutionWorkflowId } = await blockerResolved(h, c);
  expect(await failedWorkflowTasks([resolutionWorkflowId])).toEqual([]);
});
