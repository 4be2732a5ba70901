/**
 * What an operator follows a rollout by (docs/fleet.md, "Versioned rollouts"; `treewarden rollout`): per build of a
 * worker deployment, its routing status, the workers polling as it and the executions still pinned to it.
 */
import type { Client } from '@temporalio/client';
import type { DeploymentVersion } from './deployment';
import { versionName } from './deployment';

// temporal.api.enums.v1.WorkerDeploymentVersionStatus, in its numeric order
const VERSION_STATUSES = ['unspecified', 'inactive', 'current', 'ramping', 'draining', 'drained'] as const;
// temporal.api.enums.v1.TaskQueueType
const QUEUE_KINDS = ['unspecified', 'workflow', 'activity', 'nexus'] as const;

export interface BuildStatus {
  buildId: string;
  status: (typeof VERSION_STATUSES)[number];
  /** the share of new executions it receives while ramping */
  rampPercentage?: number;
  /** workers polling as this build, per task queue */
  workers: { taskQueue: string; kind: (typeof QUEUE_KINDS)[number]; identity: string }[];
  /** running executions that finish on this build (PINNED types: domain/versioning.ts) */
  pinnedRunning: number;
}

export interface RolloutStatus {
  deploymentName: string;
  currentBuildId: string | null;
  rampingBuildId: string | null;
  builds: BuildStatus[];
}

export class DeploymentNotFoundError extends Error {
  override readonly name = 'DeploymentNotFoundError';
}

export async function rolloutStatus(client: Client, deploymentName: string): Promise<RolloutStatus> {
  const service = client.workflowService;
  const { namespace } = client.options;
  const info = await service.describeWorkerDeployment({ namespace, deploymentName }).then(
    (response) => response.workerDeploymentInfo,
    (error: unknown) => {
      throw (error as { code?: number }).code === 5
        ? new DeploymentNotFoundError(`no worker deployment named "${deploymentName}" (no worker has polled as it)`)
        : error;
    },
  );
  const routing = info?.routingConfig;
  const builds = await Promise.all(
    (info?.versionSummaries ?? []).map(async (summary) => {
      const version = { deploymentName, buildId: summary.deploymentVersion?.buildId ?? '' };
      const ramping = routing?.rampingDeploymentVersion?.buildId === version.buildId;
      return {
        buildId: version.buildId,
        status: VERSION_STATUSES[Number(summary.status ?? 0)] ?? 'unspecified',
        ...(ramping ? { rampPercentage: routing?.rampingVersionPercentage ?? 0 } : {}),
        workers: await workersOf(client, version),
        pinnedRunning: await pinnedRunning(client, version),
      } satisfies BuildStatus;
    }),
  );
  return {
    deploymentName,
    currentBuildId: routing?.currentDeploymentVersion?.buildId || null,
    rampingBuildId: routing?.rampingDeploymentVersion?.buildId || null,
    builds: builds.sort((a, b) => a.buildId.localeCompare(b.buildId)),
  };
}

export async function pinnedRunning(client: Client, version: DeploymentVersion): Promise<number> {
  const { count } = await client.workflow.count(
    `TemporalWorkerDeploymentVersion = '${versionName(version)}' AND ExecutionStatus = 'Running' ` +
      `AND TemporalWorkflowVersioningBehavior = 'Pinned'`,
  );
  return count;
}

async function workersOf(client: Client, version: DeploymentVersion): Promise<BuildStatus['workers']> {
  const { namespace } = client.options;
  const described = await client.workflowService.describeWorkerDeploymentVersion({
    namespace,
    deploymentVersion: version,
  });
  const queues = described.workerDeploymentVersionInfo?.taskQueueInfos ?? [];
  const perQueue = await Promise.all(
    queues.map(async (queue) => {
      const { pollers } = await client.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: queue.name },
        taskQueueType: queue.type,
        reportPollers: true,
      });
      return (pollers ?? [])
        .filter((poller) => poller.deploymentOptions?.buildId === version.buildId)
        .map((poller) => ({
          taskQueue: queue.name ?? '',
          kind: QUEUE_KINDS[Number(queue.type ?? 0)] ?? 'unspecified',
          identity: poller.identity ?? '',
        }));
    }),
  );
  return perQueue.flat();
}

/** Makes `buildId` the build new executions start on, or, with `rampPercentage`, the one a share of them do. */
export async function promote(client: Client, version: DeploymentVersion, rampPercentage?: number): Promise<void> {
  const { namespace } = client.options;
  const identity = `treewarden-cli@${process.pid}`;
  if (rampPercentage === undefined) {
    // a new build need not poll the host queues of hosts that have left the fleet
    await client.workflowService.setWorkerDeploymentCurrentVersion({
      namespace,
      ...version,
      ignoreMissingTaskQueues: true,
      identity,
    });
  } else {
    await client.workflowService.setWorkerDeploymentRampingVersion({
      namespace,
      ...version,
      percentage: rampPercentage,
      ignoreMissingTaskQueues: true,
      identity,
    });
  }
}
