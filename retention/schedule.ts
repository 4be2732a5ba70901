/** The schedule that runs retention passes: created once, by whichever worker starts first; visible in the UI. */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { retentionWorkflow } from '../workflows/retention';

/** `treewarden-retention`; a deployment on another task queue of the same namespace gets its own */
export const retentionScheduleId = (taskQueue: string): string =>
  taskQueue === 'treewarden' ? 'treewarden-retention' : `treewarden-retention-${taskQueue}`;

/** hourly: each pass then has at most an hour's worth of newly expired rows to delete */
const PASS_EVERY = '1 hour';

export async function ensureRetentionSchedule(client: Client, taskQueue: string): Promise<'created' | 'existed'> {
  const scheduleId = retentionScheduleId(taskQueue);
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: PASS_EVERY }] },
      action: { type: 'startWorkflow', workflowType: retentionWorkflow, taskQueue, workflowId: scheduleId },
      // a pass still running when the next is due finishes alone; a pass missed while no worker ran is not made up
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: PASS_EVERY },
    });
    return 'created';
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) return 'existed';
    throw error;
  }
}
