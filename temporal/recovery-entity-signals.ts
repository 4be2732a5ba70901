/**
 * The signals of the entities that wake assignees later (an issue's monitor, the liveness watch), each starting its
 * workflow when it is not running.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Config } from '../domain/config';
import { workflowId } from '../domain/ids';
import type { MonitorSchedule } from '../domain/issue-monitor';
import { KindKey, StateKey } from '../domain/search-attributes';
import type { issueMonitorWorkflow, livenessWatchWorkflow } from '../workflows';
import {
  issueMonitorClearedSignal,
  issueMonitorSetSignal,
  livePathsMayHaveEndedSignal,
} from '../workflows/definitions';
import type { Orchestrator } from './orchestrator';
import { attributes, fairly, ignore } from './start-options';

export function createRecoveryEntitySignals(
  client: Client,
  config: Config,
): Pick<Orchestrator, 'scheduleIssueMonitor' | 'issueMonitorCleared' | 'livePathsMayHaveEnded'> {
  const taskQueue = config.TREEWARDEN_TASK_QUEUE;
  return {
    async scheduleIssueMonitor({ issueId, companyId, title, schedule }) {
      await client.workflow.signalWithStart<typeof issueMonitorWorkflow, [MonitorSchedule]>('issueMonitorWorkflow', {
        workflowId: workflowId.issueMonitor(issueId),
        taskQueue,
        args: [{ issueId, heartbeatTimeoutMs: config.TREEWARDEN_HEARTBEAT_TIMEOUT_MS }],
        signal: issueMonitorSetSignal,
        signalArgs: [schedule],
        typedSearchAttributes: attributes('issue_monitor', companyId, issueId, 'waiting'),
        memo: { issueTitle: title },
        staticSummary: `Monitor on "${title}"`,
        ...fairly(companyId, 'evaluation'),
      });
    },
    async issueMonitorCleared(issueId, version) {
      await client.workflow
        .getHandle(workflowId.issueMonitor(issueId))
        .signal(issueMonitorClearedSignal, { version })
        .catch(ignore(WorkflowNotFoundError));
    },
    async livePathsMayHaveEnded() {
      await client.workflow.signalWithStart<typeof livenessWatchWorkflow, []>('livenessWatchWorkflow', {
        workflowId: workflowId.livenessWatch(taskQueue),
        taskQueue,
        args: [
          {
            stallMs: config.TREEWARDEN_LIVENESS_STALL_MS,
            heartbeatTimeoutMs: config.TREEWARDEN_HEARTBEAT_TIMEOUT_MS,
          },
        ],
        signal: livePathsMayHaveEndedSignal,
        signalArgs: [],
        typedSearchAttributes: [
          { key: KindKey, value: 'liveness_watch' },
          { key: StateKey, value: 'waiting' },
        ],
        staticSummary: 'Liveness watch: recovers agent-owned work left with no live path',
      });
    },
  };
}
