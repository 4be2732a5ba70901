/** Each workflow type's versioning behaviour, from the one table in domain/versioning.ts (the reasons are there). */
import { setWorkflowOptions, workflowInfo, type Workflow } from '@temporalio/workflow';
import { versioningBehaviorFor, type WorkflowTypeName } from '../domain/versioning';
import { agentRunWorkflow } from './agent-run';
import { backgroundJobWorkflow } from './background-job';
import { blockerResolutionWorkflow } from './blocker-resolution';
import { hostProbeWorkflow } from './host-probe';
import { issueMonitorWorkflow } from './issue-monitor';
import { retentionWorkflow } from './retention';
import { livenessRecoveryWorkflow } from './liveness-recovery';
import { livenessWatchWorkflow } from './liveness-watch';
import { taskWatchdogWorkflow } from './task-watchdog';
import { treeHoldWorkflow } from './tree-hold';
import { webhookDeliveryWorkflow } from './webhook-delivery';

const WORKFLOWS: Record<WorkflowTypeName, Workflow> = {
  agentRunWorkflow,
  backgroundJobWorkflow,
  blockerResolutionWorkflow,
  hostProbeWorkflow,
  retentionWorkflow,
  livenessRecoveryWorkflow,
  webhookDeliveryWorkflow,
  taskWatchdogWorkflow,
  treeHoldWorkflow,
  issueMonitorWorkflow,
  livenessWatchWorkflow,
};

// a getter, read when an execution is initialised on a worker: only a versioned worker may declare a behaviour
for (const [type, workflow] of Object.entries(WORKFLOWS)) {
  setWorkflowOptions(
    () => ({
      versioningBehavior: versioningBehaviorFor(
        type as WorkflowTypeName,
        workflowInfo().currentDeploymentVersion?.deploymentName,
      ),
    }),
    workflow,
  );
}
