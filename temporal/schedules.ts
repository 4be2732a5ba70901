/** The fleet's periodic chores (retention, liveness recovery) as Temporal schedules, created once; seen in the UI. */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { Workflow } from '@temporalio/workflow';

/** `treewarden-<chore>`; a deployment on another task queue of the same namespace gets its own */
export const choreScheduleId = (chore: string, taskQueue: string): string =>
  taskQueue === 'treewarden' ? `treewarden-${chore}` : `treewarden-${chore}-${taskQueue}`;

/**
 * Creates the schedule unless it exists (whichever worker starts first creates it). A run still going when the next
 * is due finishes alone (SKIP); runs missed while no worker ran are not made up beyond `catchupWindow`.
 */
export async function ensureChoreSchedule(
  client: Client,
  chore: { scheduleId: string; taskQueue: string; workflowType: Workflow; every: Duration; catchupWindow: Duration },
): Promise<'created' | 'existed'> {
  const { scheduleId, taskQueue, workflowType } = chore;
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: chore.every }] },
      action: { type: 'startWorkflow', workflowType, taskQueue, workflowId: scheduleId },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: chore.catchupWindow },
    });
    return 'created';
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) return 'existed';
    throw error;
  }
}
