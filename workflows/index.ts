/** The workflow bundle's entry: every workflow type the worker serves. */
export { agentRunWorkflow } from './agent-run';
export { backgroundJobWorkflow } from './background-job';
export { blockerResolutionWorkflow } from './blocker-resolution';
export { taskWatchdogWorkflow } from './task-watchdog';
export { treeHoldWorkflow } from './tree-hold';
export { issueMonitorWorkflow } from './issue-monitor';
export { hostProbeWorkflow } from './host-probe';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { retentionWorkflow } from './retention';
export { livenessRecoveryWorkflow } from './liveness-recovery';
export { livenessWatchWorkflow } from './liveness-watch';
// each type's build under Worker Deployment Versioning
import './versioning';
