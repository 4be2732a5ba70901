/** The schedule that runs retention passes: created once, by whichever worker starts first; visible in the UI. */
import type { Client } from '@temporalio/client';
import { choreScheduleId, ensureChoreSchedule } from '../temporal/schedules';
import { retentionWorkflow } from '../workflows/retention';

/** `treewarden-retention` (per task queue) */
export const retentionScheduleId = (taskQueue: string): string => choreScheduleId('retention', taskQueue);

/** hourly: each pass then has at most an hour's worth of newly expired rows to delete */
const PASS_EVERY = '1 hour';

export function ensureRetentionSchedule(client: Client, taskQueue: string) {
  return ensureChoreSchedule(client, {
    scheduleId: retentionScheduleId(taskQueue),
    taskQueue,
    workflowType: retentionWorkflow,
    every: PASS_EVERY,
    // a pass missed while no worker ran is not made up
    catchupWindow: PASS_EVERY,
  });
}
