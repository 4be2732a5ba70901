/** `treewarden status`: a workflow's description and, while it runs, its state query. */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { uuidSchema, workflowId } from '../domain/ids';
import { holdStateQuery, watchdogStateQuery } from '../workflows/definitions';
import { messageOf, UsageError } from './errors';

const STATE_QUERIES = { 'task-watchdog': watchdogStateQuery, 'tree-hold': holdStateQuery } as const;

/** The workflow ids an operator may mean: an explicit workflow id, or a bare run or hold uuid. */
export function candidateWorkflowIds(id: string): string[] {
  const match = /^(task-watchdog|tree-hold|agent-run):(.*)$/.exec(id);
  if (!uuidSchema.safeParse(match ? match[2] : id).success) {
    throw new UsageError(
      `"${id}" is neither task-watchdog:<issueId>, tree-hold:<holdId>, agent-run:<runId> nor a run or hold UUID`,
    );
  }
  return match ? [id] : [workflowId.agentRun(id), workflowId.treeHold(id)];
}

export async function describeWorkflow(client: Client, ids: string[]) {
  for (const id of ids) {
    try {
      return await client.workflow.getHandle(id).describe();
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }
  throw new WorkflowNotFoundError(`no workflow ${ids.join(' or ')} in this namespace`, ids[0], undefined);
}

export async function workflowStatus(client: Client, description: WorkflowExecutionDescription) {
  const status = {
    workflowId: description.workflowId,
    runId: description.runId,
    type: description.type,
    status: description.status.name,
    summary: (await description.staticSummary()) ?? null,
    taskQueue: description.taskQueue,
    startTime: description.startTime,
    closeTime: description.closeTime ?? null,
    historyLength: description.historyLength,
    searchAttributes: Object.fromEntries(
      description.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
    ),
    memo: description.memo ?? {},
  };
  const query = STATE_QUERIES[description.workflowId.split(':')[0] as keyof typeof STATE_QUERIES];
  if (!query || description.status.name !== 'RUNNING') return status;
  // a query needs a worker to answer it: do not hang when none is polling
  try {
    return {
      ...status,
      state: await client.withDeadline(Date.now() + 5_000, () =>
        client.workflow.getHandle(description.workflowId).query(query.name),
      ),
    };
  } catch (error) {
    return { ...status, stateError: `state query failed (is a worker running?): ${messageOf(error)}` };
  }
}

export function humanStatus(status: Awaited<ReturnType<typeof workflowStatus>>): string {
  const rows: [string, unknown][] = [
    ['workflow', status.workflowId],
    ['run id', status.runId],
    ['type', status.type],
    ['status', status.status],
    ['summary', status.summary],
    ['task queue', status.taskQueue],
    ['started', status.startTime.toISOString()],
    ['closed', status.closeTime?.toISOString()],
    ['history', `${status.historyLength} events`],
    ...Object.entries(status.searchAttributes).map(([key, value]): [string, unknown] => [key, value]),
  ];
  const lines = rows
    .filter(([, value]) => value != null)
    .map(([key, value]) => `${`${key}:`.padEnd(22)} ${String(value)}`);
  if ('state' in status) lines.push(`state:\n${JSON.stringify(status.state, null, 2).replace(/^/gm, '  ')}`);
  if ('stateError' in status) lines.push(`state: ${status.stateError}`);
  return lines.join('\n');
}
