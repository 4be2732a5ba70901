/** Stories of the entities that wake assignees later: an issue's monitor, liveness recovery's pass and its watch. */
import { randomBytes } from 'node:crypto';
import { workflowId } from '../domain/ids';
import { livenessRecoveryWorkflow } from '../workflows/liveness-recovery';
import type { LivenessWatchResult, livenessWatchWorkflow } from '../workflows/liveness-watch';
import { eventually, type Harness, type seedCompany } from './harness';

type Company = Awaited<ReturnType<typeof seedCompany>>;

/** An issue's monitor set for an hour, refreshed to two seconds ahead: its workflow moves the timer and fires once. */
export async function issueMonitorRefreshedThenFired(h: Harness, c: Company) {
  const issue = await c.issue({ title: 'checked later', assigneeAgentId: (await c.agent()).id, status: 'todo' });
  const set = async (seconds: number) => {
    const at = new Date(Date.now() + seconds * 1000).toISOString();
    const put = await h.request('PUT', `/api/issues/${issue.id}/monitor`, c.token, { at, note: 'checked?' });
    if (put.status !== 201 && put.status !== 200) throw new Error(`monitor: ${JSON.stringify(put.body)}`);
  };
  await set(3600);
  await set(2);
  await h.services.client.workflow.getHandle(workflowId.issueMonitor(issue.id)).result();
  return { monitorWorkflowId: workflowId.issueMonitor(issue.id) };
}

/** A liveness pass over a company with one stalled issue (idle for an hour): it wakes its assignee once. */
export async function livenessPassRecovers(h: Harness, c: Company) {
  const issue = await c.issue({
    title: 'left in progress',
    assigneeAgentId: (await c.agent()).id,
    status: 'in_progress',
  });
  await h.services.db.$executeRaw`
    UPDATE "Issue" SET "updatedAt" = "updatedAt" - interval '1 hour' WHERE id = ${issue.id}::uuid`;
  const id = `liveness-${randomBytes(4).toString('hex')}`;
  const pass = await h.services.client.workflow.execute(livenessRecoveryWorkflow, {
    taskQueue: h.services.config.TREEWARDEN_TASK_QUEUE,
    workflowId: id,
  });
  if (pass.recovered < 1) throw new Error(`liveness pass: ${JSON.stringify(pass)}`);
  return { workflowId: id };
}

/**
 * On a stack whose stall threshold is a few seconds: an agent's run ends and leaves its issue in progress with no
 * live path. Nothing scans: the run's end tells the liveness watch, which recovers the stall when it falls due, and
 * stands down once the recovery's own run has ended without restoring a path. Returns the watch's executions in
 * order, each with its result.
 */
export async function livenessWatchRecovers(h: Harness, c: Company) {
  const issue = await c.issue({
    title: 'left in progress',
    assigneeAgentId: (await c.agent()).id,
    status: 'in_progress',
  });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  if (wake.status !== 202) throw new Error(`wake: ${JSON.stringify(wake.body)}`);
  const id = workflowId.livenessWatch(h.services.config.TREEWARDEN_TASK_QUEUE);
  // each execution completes when no idle issue is left waiting, and the next change starts another; each one
  // waits seconds on its timer, so every execution is seen running and then read by its run id
  const results = new Map<string, LivenessWatchResult | null>();
  await eventually(
    'the watch stood down after the recovery',
    async () => {
      const { runId } = await h.services.client.workflow.getHandle(id).describe();
      if (!results.has(runId)) results.set(runId, null);
      for (const [seen, result] of results)
        if (result === null) {
          const handle = h.services.client.workflow.getHandle<typeof livenessWatchWorkflow>(id, seen);
          if ((await handle.describe()).status.name === 'COMPLETED') results.set(seen, await handle.result());
        }
      const done = [...results.values()];
      return done.every((r) => r !== null) && done.some((r) => r!.stoodDown > 0);
    },
    120_000,
  );
  const executions = [...results].map(([runId, result]) => ({ runId, result: result! }));
  return { issueId: issue.id, workflowId: id, executions };
}
