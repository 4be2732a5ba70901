/** Temporal-side notifications for the main app: changes it made itself, outside treewarden's API. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { workflowId } from '../domain/ids';
import { subtreeChangedSignal } from '../workflows/definitions';

export interface SubtreeChangedNotice {
  /** the watched issue (the watchdog's root), not the changed descendant */
  issueId: string;
  watchdogId: string;
  /** short machine-readable cause, e.g. `issue_updated` */
  reason: string;
}

/**
 * Signals the task watchdog of `issueId` that its subtree changed. Returns false when no watchdog
 * workflow is running for the issue (nothing to tell; a new watchdog evaluates on start anyway).
 */
export async function notifySubtreeChanged(temporalClient: Pick<Client, 'workflow'>, { issueId, watchdogId, reason }: SubtreeChangedNotice): Promise<boolean> {
  try {
    await temporalClient.workflow.getHandle(workflowId.taskWatchdog(issueId)).signal(subtreeChangedSignal, { watchdogId, reason });
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}
