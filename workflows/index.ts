/** The workflow bundle's entry: every workflow type the worker serves. */
export { agentRunWorkflow } from './agent-run';
export { taskWatchdogWorkflow } from './task-watchdog';
export { treeHoldWorkflow } from './tree-hold';
