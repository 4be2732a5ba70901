import { workflowInfo } from '@temporalio/workflow';

/**
 * Whether an entity workflow should hand over to a fresh run (continue-as-new) at its next exit: the server suggests
 * it, or the history has reached `maxEvents`, our own threshold, lower so a burst of signals still fits after it.
 */
export function historyFull(maxEvents: number): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= maxEvents;
}
