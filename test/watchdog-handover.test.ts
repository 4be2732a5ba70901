/**
 * @module Task watchdog hand-over, as workflow logic: a re-added watchdog that signals while the
 * running one confirms its own removal takes over instead of being dropped with the completed run.
 * The real workflow runs on the real dev server; its two activities are scripted, so the signal
 * lands exactly while the evaluation is in flight (the race an integration test can only hope for).
 */
import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../activities';
import type { EvaluationSummary } from '../domain/watchdog';
import { workflowId } from '../domain/ids';
import { watchdogRecoverySignal, watchdogStateQuery } from '../workflows/definitions';
import type { TaskWatchdogInput } from '../workflows/task-watchdog';
import { eventually, startHarness, workflowBundle, type Harness } from '../testing/harness';
import { UNTRACED } from '../runtime/tracing';
import { workflowSpanSinks } from '../workers/tracing';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { inProcessWorker: false });
});
afterAll(async () => {
  await h?.close();
});

const summary = (watchdogId: string, state: EvaluationSummary['state']): EvaluationSummary => ({
  watchdogId,
  state,
  fingerprint: null,
  lastReviewedFingerprint: null,
  includedCount: 1,
  stoppedLeafCount: 0,
  liveIssueIds: [],
  incompleteIssueIds: [],
  woke: false,
  reviewIssueId: null,
  evaluatedAt: new Date().toISOString(),
});

test('a successor signalling during an evaluation that finds the watchdog removed takes the workflow over', async () => {
  const [removed, successor, issueId] = [randomUUID(), randomUUID(), randomUUID()];
  const evaluated: string[] = [];
  let finishFirstEvaluation!: () => void;
  const firstEvaluationHeld = new Promise<void>((resolve) => (finishFirstEvaluation = resolve));
  let firstEvaluationStarted!: () => void;
  const firstEvaluationRunning = new Promise<void>((resolve) => (firstEvaluationStarted = resolve));
  const activities: Pick<Activities, 'evaluateWatchdog' | 'isWatchdogActive'> = {
    async evaluateWatchdog(watchdogId) {
      evaluated.push(watchdogId);
      if (watchdogId !== removed) return summary(watchdogId, 'already_reviewed');
      firstEvaluationStarted();
      await firstEvaluationHeld;
      return summary(watchdogId, 'removed');
    },
    async isWatchdogActive(watchdogId) {
      return watchdogId === successor;
    },
  };
  const taskQueue = `handover-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: h.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: h.env.TEMPORAL_NAMESPACE,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
    sinks: workflowSpanSinks(UNTRACED),
  });
  await worker.runUntil(async () => {
    const input: TaskWatchdogInput = { watchdogId: removed, issueId, tickMs: 3_600_000, debounceMs: 1 };
    const handle = await h.services.client.workflow.start('taskWatchdogWorkflow', {
      workflowId: workflowId.taskWatchdog(issueId),
      taskQueue,
      args: [input],
    });
    await firstEvaluationRunning;
    await handle.signal(watchdogRecoverySignal, { watchdogId: successor, reason: 'worker_recovery' });
    finishFirstEvaluation();
    await eventually('the successor evaluated', async () => evaluated.includes(successor));
    expect(evaluated).toEqual([removed, successor]);
    const state = await handle.query(watchdogStateQuery);
    expect(state).toMatchObject({ watchdogId: successor, removed: false, evaluations: 1 });
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test over');
  });
  await connection.close();
});
