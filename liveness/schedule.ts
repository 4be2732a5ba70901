/** The schedule that runs liveness recovery's scan: created once, by the first worker to start; visible in the UI. */
import type { Client } from '@temporalio/client';
import { choreScheduleId, ensureChoreSchedule } from '../temporal/schedules';
import { livenessRecoveryWorkflow } from '../workflows/liveness-recovery';

/** `treewarden-liveness` (per task queue) */
export const livenessScheduleId = (taskQueue: string): string => choreScheduleId('liveness', taskQueue);

export function ensureLivenessSchedule(client: Client, taskQueue: string, everyMs: number) {
  return ensureChoreSchedule(client, {
    scheduleId: livenessScheduleId(taskQueue),
    taskQueue,
    workflowType: livenessRecoveryWorkflow,
    every: everyMs,
    // passes missed while no worker ran are not made up: the next one finds every stall they would have
    catchupWindow: Math.max(everyMs, 60_000),
  });
}
