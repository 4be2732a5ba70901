/**
 * The rollout's safety check (`treewarden rollout check-replay`): the running executions a new build would take over
 * (the AUTO_UPGRADE types of domain/versioning.ts) replay against that build's workflow bundle before it is
 * promoted. An unpatched change to their code fails here, not on the fleet.
 */
import type { Client } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { MOVING_WORKFLOW_TYPES } from '../domain/versioning';
import { UNTRACED } from '../runtime/tracing';
import { workflowSpanSinks } from './tracing';

export interface ReplayCheck {
  replayed: number;
  failures: { workflowId: string; error: string }[];
}

export async function replayMovingExecutions(
  client: Client,
  workflowCode: string,
  options: { deploymentName: string; limit: number },
): Promise<ReplayCheck> {
  quietRuntime();
  const types = MOVING_WORKFLOW_TYPES.map((type) => `'${type}'`).join(', ');
  const running = client.workflow.list({
    query:
      `WorkflowType IN (${types}) AND ExecutionStatus = 'Running' ` +
      `AND TemporalWorkerDeployment = '${options.deploymentName}'`,
    pageSize: Math.min(options.limit, 100),
  });
  const histories = limited(running.intoHistories({ concurrency: 4 }), options.limit);
  // the bundle's tracing interceptors call this sink whenever a span ends, replaying or not
  const replayOptions = { workflowBundle: { code: workflowCode }, sinks: workflowSpanSinks(UNTRACED) };
  const check: ReplayCheck = { replayed: 0, failures: [] };
  for await (const result of Worker.runReplayHistories(replayOptions, histories)) {
    check.replayed++;
    if (result.error) check.failures.push({ workflowId: result.workflowId, error: result.error.message });
  }
  return check;
}

/**
 * The replayer's native core prints its own log lines on stdout, where `--json` promises machine output only: they go
 * to stderr through the runtime's logger instead (the runtime shuts down with the replay worker, so nothing is held).
 */
function quietRuntime() {
  if (Runtime._instance !== undefined) return;
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => process.stderr.write(`${entry.level} ${entry.message}\n`)),
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
}

async function* limited<T>(items: AsyncIterable<T>, limit: number): AsyncIterable<T> {
  let taken = 0;
  for await (const item of items) {
    if (taken++ >= limit) return;
    yield item;
  }
}
