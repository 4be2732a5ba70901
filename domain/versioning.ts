/**
 * Which build each workflow type runs on under Worker Deployment Versioning (docs/fleet.md, "Versioned rollouts"), one
 * table for the workflows (workflows/versioning.ts applies it) and for the rollout's replay check
 * (workers/replay-check.ts).
 *
 * - PINNED: an execution finishes on the build that started it, so a rollout never replays its history on other
 *   code. For the work that ends by itself: a run lasts as long as its agent, and a rollout keeps the old build's
 *   workers until the runs pinned to it have ended (`treewarden rollout wait-drained`).
 * - AUTO_UPGRADE: an execution moves to the current build at its next workflow task, so every change to its code
 *   goes through `patched()` (CONTRIBUTING) and is replay-checked before a rollout (`treewarden rollout
 *   check-replay`). For the entities that live as long as their row: a watchdog lives for months, a hold until its
 *   release, a monitor until its time (up to 90 days) and the liveness watch while idle work waits, and pinning them
 *   would keep an old build running as long.
 *   (Moving a pinned execution at continue-as-new needs a newer server than 1.29.)
 */
import type { VersioningBehavior } from '@temporalio/common';

export const VERSIONING_BEHAVIORS = {
  agentRunWorkflow: 'PINNED',
  backgroundJobWorkflow: 'PINNED',
  blockerResolutionWorkflow: 'PINNED',
  hostProbeWorkflow: 'PINNED',
  retentionWorkflow: 'PINNED',
  livenessRecoveryWorkflow: 'PINNED',
  webhookDeliveryWorkflow: 'PINNED',
  taskWatchdogWorkflow: 'AUTO_UPGRADE',
  treeHoldWorkflow: 'AUTO_UPGRADE',
  issueMonitorWorkflow: 'AUTO_UPGRADE',
  livenessWatchWorkflow: 'AUTO_UPGRADE',
} as const satisfies Record<string, VersioningBehavior>;

export type WorkflowTypeName = keyof typeof VERSIONING_BEHAVIORS;

/**
 * The behaviour an execution declares to the worker running its task: none on a worker that polls without a
 * deployment (`TREEWARDEN_WORKER_VERSIONING=off`, the replayer), which the server refuses a behaviour from. Such a
 * worker still reports a version of its build id, with no deployment name.
 */
export function versioningBehaviorFor(
  type: WorkflowTypeName,
  taskDeploymentName: string | undefined,
): VersioningBehavior | undefined {
  return taskDeploymentName ? VERSIONING_BEHAVIORS[type] : undefined;
}

/** the types whose running executions a new build takes over, so its code must replay their histories */
export const MOVING_WORKFLOW_TYPES = (Object.keys(VERSIONING_BEHAVIORS) as WorkflowTypeName[]).filter(
  (type) => VERSIONING_BEHAVIORS[type] === 'AUTO_UPGRADE',
);
