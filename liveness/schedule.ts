/** The schedule that runs liveness recovery's scan: created once, by the first worker to start; visible in the UI. */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { livenessRecoveryWorkflow } from '../workflows/liveness-recovery';

/** `treewarden-liveness`; a deployment on another task queue of the same namespace gets its own */
export const livenessScheduleId = (taskQueue: string): string =>
  taskQueue === 'treewarden' ? 'treewarden-liveness' : `treewarden-liveness-${taskQueue}`;

export async function ensureLivenessSchedule(
  client: Client,
  taskQueue: string,
  everyMs: number,
): Promise<'created' | 'existed'> {
  const scheduleId = livenessScheduleId(taskQueue);
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: everyMs }] },
      action: { type: 'startWorkflow', workflowType: livenessRecoveryWorkflow, taskQueue, workflowId: scheduleId },
      // a pass still running when the next is due finishes alone; passes missed while no worker ran are not made up
      // (the next one finds every stall they would have)
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: Math.max(everyMs, 60_000) },
    });
    return 'created';
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) return 'existed';
    throw error;
  }
}
