/** Stories of the entities that wake assignees later: an issue's monitor and liveness recovery's pass. */
import { randomBytes } from 'node:crypto';
import { workflowId } from '../domain/ids';
import { livenessRecoveryWorkflow } from '../workflows/liveness-recovery';
import type { Harness, seedCompany } from './harness';

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
