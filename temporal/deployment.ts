/**
 * Worker Deployment Versioning (docs/fleet.md, "Versioned rollouts"): which deployment version a worker polls as, and
 * the deployment's routing (which version new executions start on). Each workflow type's behaviour is declared in
 * domain/versioning.ts.
 */
import { createHash } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import type { Config } from '../domain/config';

/** the client's or a worker's NativeConnection's: both speak the same service */
export type WorkflowService = Connection['workflowService'];

export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

/** A build id names the workflow code itself: every worker loading the same bundle polls as the same version. */
export const bundleBuildId = (workflowCode: string): string =>
  `bundle-${createHash('sha256').update(workflowCode).digest('hex').slice(0, 16)}`;

/** The version this worker polls as, or null when versioning is off (every worker serves every execution). */
export function deploymentVersionOf(config: Config, workflowCode: string): DeploymentVersion | null {
  if (config.TREEWARDEN_WORKER_VERSIONING === 'off') return null;
  return {
    deploymentName: config.TREEWARDEN_DEPLOYMENT_NAME,
    buildId: config.TREEWARDEN_BUILD_ID ?? bundleBuildId(workflowCode),
  };
}

/** the form visibility queries (`TemporalWorkerDeploymentVersion`) and the Temporal UI use */
export const versionName = (version: DeploymentVersion) => `${version.deploymentName}:${version.buildId}`;

export type BecomeCurrentOutcome = 'became current' | 'already current' | 'another build is current';

/**
 * A deployment's first version becomes current by itself, so a new fleet (or `npm start`) needs no rollout step;
 * after that only an operator changes it (`treewarden rollout promote`). The describe-then-set goes through the
 * deployment's conflict token, so two new builds starting at once cannot both take it.
 */
export async function becomeCurrentIfNone(
  service: WorkflowService,
  namespace: string,
  version: DeploymentVersion,
  options: { deadlineMs: number; retryMs: number },
): Promise<BecomeCurrentOutcome> {
  const deadline = Date.now() + options.deadlineMs;
  for (;;) {
    try {
      const { workerDeploymentInfo, conflictToken } = await service.describeWorkerDeployment({
        namespace,
        deploymentName: version.deploymentName,
      });
      const current = workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId;
      if (current) return current === version.buildId ? 'already current' : 'another build is current';
      await service.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        conflictToken,
        // host queues come and go with hosts: a version need not poll every queue an older one did
        ignoreMissingTaskQueues: true,
        identity: `treewarden-worker@${process.pid}`,
      });
      return 'became current';
    } catch (error) {
      // the deployment or this version is registered by the server shortly after the first poll; a conflict means
      // another worker changed the routing in between: look again
      if (!isRetryable(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, options.retryMs));
    }
  }
}

// NOT_FOUND, FAILED_PRECONDITION, ABORTED, UNAVAILABLE
const RETRYABLE_CODES = new Set([5, 9, 10, 14]);
// a worker's NativeConnection fails with its own error class, the client with a grpc-js one: both carry the code
const isRetryable = (error: unknown) =>
  error instanceof Error && RETRYABLE_CODES.has((error as Error & { code?: unknown }).code as number);
