/** Each workflow type's versioning behaviour, from the one table in domain/versioning.ts (the reasons are there). */
import { setWorkflowOptions, type Workflow } from '@temporalio/workflow';
import { VERSIONING_BEHAVIORS, type WorkflowTypeName } from '../domain/versioning';
import { agentRunWorkflow } from './agent-run';
import { backgroundJobWorkflow } from './background-job';
import { blockerResolutionWorkflow } from './blocker-resolution';
import { hostProbeWorkflow } from './host-probe';
import { retentionWorkflow } from './retention';
import { taskWatchdogWorkflow } from './task-watchdog';
import { treeHoldWorkflow } from './tree-hold';
import { webhookDeliveryWorkflow } from './webhook-delivery';

const WORKFLOWS: Record<WorkflowTypeName, Workflow> = {
  agentRunWorkflow,
  backgroundJobWorkflow,
  blockerResolutionWorkflow,
  hostProbeWorkflow,
  retentionWorkflow,
  webhookDeliveryWorkflow,
  taskWatchdogWorkflow,
  treeHoldWorkflow,
};

for (const [type, workflow] of Object.entries(WORKFLOWS)) {
  setWorkflowOptions({ versioningBehavior: VERSIONING_BEHAVIORS[type as WorkflowTypeName] }, workflow);
}
