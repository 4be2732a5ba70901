/**
 * The main path of every workflow type, driven through the API as the main app would. Shared by the
 * history recordings (scripts/record-histories.ts), the no-cache replay test, the Temporal UI test and
 * the metrics test, so all of them exercise the same stories.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { workflowId } from '../domain/ids';
import { runFiles } from '../runs/run-files';
import { retentionWorkflow } from '../workflows/retention';
import { eventually, seedCompany, type Harness } from './harness';

type Company = Awaited<ReturnType<typeof seedCompany>>;

/** The run once its workflow has completed: the database may say settled while the stop is still being verified. */
async function settledRun(h: Harness, runId: string) {
  // retried: the run's workflow may not have been started yet
  await eventually(
    `run ${runId} completed`,
    async () => (await h.services.client.workflow.getHandle(workflowId.agentRun(runId)).result()) !== undefined,
  );
  return h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
}

async function wake(h: Harness, c: Company, issueId: string): Promise<string> {
  const r = await h.request('POST', `/api/issues/${issueId}/wake`, c.token, {});
  if (r.status !== 202) throw new Error(`wake: ${JSON.stringify(r.body)}`);
  return r.body.runId as string;
}

/**
 * A watched subtree that has come to rest: the watchdog evaluates it as stopped and wakes its agent
 * once (whose review run succeeds). With `remove`, the watchdog is then removed and its workflow completes.
 */
export async function watchdogWakes(h: Harness, c: Company, { remove }: { remove: boolean }) {
  const watcher = await c.agent();
  const root = await c.issue({ title: `ship feature ${randomBytes(2).toString('hex')}` });
  await c.issue({ title: 'write code', parentId: root.id, status: 'done' });
  // assigned and never woken: with a first-run grace the workflow re-checks when it ends
  await c.issue({ title: 'write docs', parentId: root.id, assigneeAgentId: (await c.agent()).id });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  if (put.status !== 201) throw new Error(`watchdog: ${JSON.stringify(put.body)}`);
  const reviewRun = await eventually('the watchdog agent woken for the stopped subtree', () =>
    h.services.db.run.findFirst({ where: { agentId: watcher.id } }),
  );
  await settledRun(h, reviewRun.id);
  const watchdog = h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id));
  if (remove) {
    await h.request('DELETE', `/api/issues/${root.id}/watchdog`, c.token);
    await watchdog.result();
  }
  return {
    issueId: root.id,
    watchdogWorkflowId: watchdog.workflowId,
    reviewRunWorkflowId: workflowId.agentRun(reviewRun.id),
  };
}

/**
 * A reviewed stop accepted only for two seconds (`recheckAfter`): the watchdog's re-check timer fires, the same stop
 * wakes its agent once more, and the watchdog is then removed so its workflow completes.
 */
export async function watchdogRechecks(h: Harness, c: Company) {
  const { issueId, watchdogWorkflowId } = await watchdogWakes(h, c, { remove: false });
  const review = await h.services.db.issue.findFirstOrThrow({
    where: { originKind: 'task_watchdog', originId: issueId },
  });
  const recheckAfter = new Date(Date.now() + 2_000).toISOString();
  const accepted = await h.request('PATCH', `/api/issues/${review.id}`, c.token, { status: 'done', recheckAfter });
  if (accepted.status !== 200) throw new Error(`disposition: ${JSON.stringify(accepted.body)}`);
  const recheckWake = await eventually('the re-check woke the agent again', () =>
    h.services.db.wakeRequest.findFirst({ where: { issueId: review.id, idempotencyKey: { endsWith: ':recheck:1' } } }),
  );
  const recheckRun = await eventually('the re-check run', () =>
    h.services.db.run.findFirst({ where: { wakeRequestId: recheckWake.id } }),
  );
  await settledRun(h, recheckRun.id);
  await h.request('DELETE', `/api/issues/${issueId}/watchdog`, c.token);
  await h.services.client.workflow.getHandle(watchdogWorkflowId).result();
  return { watchdogWorkflowId };
}

interface HoldScenarioOptions {
  release: boolean;
  failFirstResumeWake?: boolean;
}

/**
 * A tree hold over a running agent: the pause stops the run (verified: its process group exits), and
 * with `release` the release re-dispatches it once and the resumed run succeeds. With
 * `failFirstResumeWake`, Temporal refuses the resumed run's start during the release, so the hold's
 * workflow retries the resume.
 */
export async function holdInterruptsRun(h: Harness, c: Company, options: HoldScenarioOptions) {
  const { release, failFirstResumeWake = false } = options;
  // the prepare step blocks only on the first run, so the resumed run passes straight through
  const marker = `/tmp/tw-prep-${randomBytes(6).toString('hex')}`;
  const agent = await c.agent({
    type: 'process',
    command: 'true',
    prepare: { command: 'sh', args: ['-c', `test -f ${marker} && exit 0; touch ${marker}; sleep 60 & wait`] },
  });
  const parent = await c.issue({ title: `release train ${randomBytes(2).toString('hex')}` });
  const child = await c.issue({
    title: 'migrate the schema',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  const stoppedRunId = await wake(h, c, child.id);
  await eventually('prepare step running', async () => existsSync(marker));
  const pause = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' });
  if (pause.status !== 201) throw new Error(`pause: ${JSON.stringify(pause.body)}`);
  const holdId = pause.body.id as string;
  await settledRun(h, stoppedRunId);
  let resumedRunId: string | null = null;
  if (release) {
    const { orchestrator } = h.services;
    const startRun = orchestrator.startRun;
    if (failFirstResumeWake) {
      orchestrator.startRun = async () => {
        throw new Error('temporal frontend unavailable');
      };
    }
    const released = await h.request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {});
    orchestrator.startRun = startRun;
    const resumedNow = failFirstResumeWake ? 0 : 1;
    if (released.status !== 200 || released.body.resumed.length !== resumedNow) {
      throw new Error(`release: ${JSON.stringify(released.body)}`);
    }
    const resumedRun = () =>
      h.services.db.run.findFirst({ where: { issueId: child.id, wakeReason: 'issue_tree_resumed' } });
    resumedRunId = failFirstResumeWake
      ? (await eventually('the retried resume', resumedRun)).id
      : (released.body.resumed[0].runId as string);
    await settledRun(h, resumedRunId);
    await h.services.client.workflow.getHandle(workflowId.treeHold(holdId)).result();
  }
  return {
    issueId: parent.id,
    holdWorkflowId: workflowId.treeHold(holdId),
    stoppedRunWorkflowId: workflowId.agentRun(stoppedRunId),
    resumedRunWorkflowId: resumedRunId && workflowId.agentRun(resumedRunId),
  };
}

/** An agent whose command exits non-zero: the run fails and settles once. */
export async function runFails(h: Harness, c: Company) {
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', 'exit 3'] });
  const issue = await c.issue({ title: 'flaky job', assigneeAgentId: agent.id, status: 'todo' });
  const runId = await wake(h, c, issue.id);
  const run = await settledRun(h, runId);
  if (run.status !== 'failed') throw new Error(`expected a failed run, got ${run.status}`);
  return { runWorkflowId: workflowId.agentRun(runId) };
}

/** A running agent starts a monitor; an operator stops the run; the monitor stops with its owner. */
export async function monitorStopsWithOwner(h: Harness, c: Company) {
  const agent = await c.agent({ type: 'process', command: 'sleep', args: ['30'] });
  const issue = await c.issue({ title: 'long task with a watcher', assigneeAgentId: agent.id, status: 'todo' });
  const runId = await wake(h, c, issue.id);
  await eventually(
    'run process started',
    async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).processGroupId !== null,
  );
  const job = await h.request('POST', `/api/runs/${runId}/jobs`, c.token, {
    kind: 'monitor',
    command: 'sleep',
    args: ['300'],
  });
  if (job.status !== 201) throw new Error(`monitor: ${JSON.stringify(job.body)}`);
  const jobId = job.body.id as string;
  await eventually(
    'monitor process started',
    async () => (await h.services.db.job.findUniqueOrThrow({ where: { id: jobId } })).processGroupId !== null,
  );
  const stop = await h.request('POST', `/api/work/${runId}/stop`, c.token);
  if (stop.status !== 200) throw new Error(`stop: ${JSON.stringify(stop.body)}`);
  await settledRun(h, runId);
  await h.services.client.workflow.getHandle(workflowId.backgroundJob(jobId)).result();
  return { runWorkflowId: workflowId.agentRun(runId), jobWorkflowId: workflowId.backgroundJob(jobId) };
}

/**
 * A pause stops an agent mid-command without a checkpoint (unknown outcome): the release skips it,
 * a person resolves its execution blocker, and the resolution's workflow dispatches the one resume.
 */
export async function blockerResolved(h: Harness, c: Company) {
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: [
      '-c',
      '[ "$TREEWARDEN_WAKE_REASON" = issue_tree_resumed ] && exit 0; ' +
        'echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 60 & wait',
    ],
  });
  const parent = await c.issue({ title: `nightly import ${randomBytes(2).toString('hex')}` });
  const child = await c.issue({
    title: 'load the data',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  const runId = await wake(h, c, child.id);
  // the journal line comes after the adapter was entered: the agent is in its `sleep`
  await eventually('the agent is mid-command', async () => existsSync(runFiles(runId, null).journal));
  const pause = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' });
  if (pause.status !== 201) throw new Error(`pause: ${JSON.stringify(pause.body)}`);
  await settledRun(h, runId);
  await h.request('POST', `/api/issues/${parent.id}/tree-holds/${pause.body.id}/release`, c.token, {});
  const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId } });
  const resolved = await h.request('POST', `/api/execution-blockers/${blocker.id}/resolve`, c.token, {
    resolution: 'no_external_effects',
  });
  if (resolved.status !== 200) throw new Error(`resolve: ${JSON.stringify(resolved.body)}`);
  const resolution = h.services.client.workflow.getHandle(workflowId.blockerResolution(blocker.id));
  await resolution.result();
  return { resolutionWorkflowId: resolution.workflowId };
}

/** Inspecting a live run asks its host: a host-probe workflow reads the process table on the host's queue. */
export async function inspectionProbesHost(h: Harness, c: Company) {
  const agent = await c.agent({ type: 'process', command: 'sleep', args: ['30'] });
  const issue = await c.issue({ title: 'inspected while it runs', assigneeAgentId: agent.id, status: 'todo' });
  const runId = await wake(h, c, issue.id);
  await eventually(
    'run process started',
    async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).processGroupId !== null,
  );
  const view = await h.request('GET', `/api/runs/${runId}/inspect`, c.token);
  if (view.status !== 200 || view.body.processTree?.visible !== true)
    throw new Error(`inspect: ${JSON.stringify(view.body)}`);
  const query = `WorkflowType = 'hostProbeWorkflow' AND TaskQueue = '${h.env.TREEWARDEN_TASK_QUEUE}'`;
  const probe = await eventually('the host-probe workflow indexed', async () => {
    for await (const execution of h.services.client.workflow.list({ query })) return execution;
    return null;
  });
  const stop = await h.request('POST', `/api/work/${runId}/stop`, c.token);
  if (stop.status !== 200) throw new Error(`stop: ${JSON.stringify(stop.body)}`);
  await settledRun(h, runId);
  return { probeWorkflowId: probe.workflowId };
}

/** One retention pass, as the `treewarden-retention` schedule starts it; its result is what it removed. */
export async function retentionPasses(h: Harness) {
  const id = `retention-${randomBytes(4).toString('hex')}`;
  const removed = await h.services.client.workflow.execute(retentionWorkflow, {
    taskQueue: h.services.config.TREEWARDEN_TASK_QUEUE,
    workflowId: id,
  });
  return { workflowId: id, removed };
}

/**
 * A company at a cap of one running run (the harness's TREEWARDEN_COMPANY_MAX_RUNNING_RUNS): its second run waits in
 * its workflow. Dispatched at the cap, the run would wait as a row; its workflow is started anyway, as for a run
 * whose dispatch raced the company filling up.
 */
export async function runWaitsForCompanyCap(h: Harness, c: Company) {
  const run = (id: string) => h.services.db.run.findUniqueOrThrow({ where: { id } });
  const started = async (title: string) => {
    const agent = await c.agent({ type: 'process', command: 'sleep', args: ['5'] });
    return wake(h, c, (await c.issue({ title, assigneeAgentId: agent.id, status: 'todo' })).id);
  };
  const first = await started('first at the cap');
  await eventually('the first run running', async () => (await run(first)).status === 'running');
  const second = await started('second, after the first');
  const waiting = await eventually('the second run waiting for its company cap', async () => {
    const row = await h.services.db.run.findUniqueOrThrow({ where: { id: second }, include: { issue: true } });
    return row.companyCapQueuedAt ? row : null;
  });
  const { companyId, issueId } = waiting;
  await h.services.orchestrator.startRun({ runId: second, companyId, issueId, title: waiting.issue.title });
  const settled = await settledRun(h, second);
  if (settled.status !== 'succeeded') throw new Error(`expected the waiting run to succeed, got ${settled.status}`);
  return { runWorkflowId: workflowId.agentRun(second) };
}
