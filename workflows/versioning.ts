/**
 * Which build each workflow type runs on once workers use Worker Deployment Versioning (README, "Versioned
 * rollouts"). Declared here, in one table, so a new workflow type cannot be added without choosing.
 *
 * - PINNED: an execution finishes on the build that started it, so a rollout never replays its history on other
 *   code. For the work that ends by itself: a run lasts as long as its agent and a rollout keeps the old build's
 *   workers until the runs pinned to it have ended (`treewarden rollout status` counts them).
 * - AUTO_UPGRADE: an execution moves to the current build at its next workflow task, and every change to its code
 *   goes through `patched()` (CONTRIBUTING). For the entities that live as long as their row: a watchdog lives for
 *   months and a hold until its release, so pinning them would keep an old build running for as long. (Moving a
 *   pinned execution at continue-as-new needs a newer server than 1.29.)
 */
import type { VersioningBehavior } from '@temporalio/common';
import { setWorkflowOptions, type Workflow } from '@temporalio/workflow';
import { agentRunWorkflow } from './agent-run';
import { backgroundJobWorkflow } from './background-job';
import { blockerResolutionWorkflow } from './blocker-resolution';
import { hostProbeWorkflow } from './host-probe';
import { retentionWorkflow } from './retention';
import { taskWatchdogWorkflow } from './task-watchdog';
import { treeHoldWorkflow } from './tree-hold';
import { webhookDeliveryWorkflow } from './webhook-delivery';

export const VERSIONING_BEHAVIORS = [
  [agentRunWorkflow, 'PINNED'],
  [backgroundJobWorkflow, 'PINNED'],
  [blockerResolutionWorkflow, 'PINNED'],
  [hostProbeWorkflow, 'PINNED'],
  [retentionWorkflow, 'PINNED'],
  [webhookDeliveryWorkflow, 'PINNED'],
  [taskWatchdogWorkflow, 'AUTO_UPGRADE'],
  [treeHoldWorkflow, 'AUTO_UPGRADE'],
] as const satisfies readonly (readonly [Workflow, VersioningBehavior])[];

for (const [workflow, versioningBehavior] of VERSIONING_BEHAVIORS) {
  setWorkflowOptions({ versioningBehavior }, workflow as Workflow);
}
