import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/** Every entity id is a UUID; anything else is a malformed id (400), never a lookup. */
export const uuidSchema = z.uuid({ message: 'must be a UUID' });

/** Readable workflow ids: the Temporal UI shows what each execution is about. */
export const workflowId = {
  taskWatchdog: (issueId: string) => `task-watchdog:${issueId}`,
  treeHold: (holdId: string) => `tree-hold:${holdId}`,
  issueMonitor: (issueId: string) => `issue-monitor:${issueId}`,
  /** one per task queue (a deployment), like the chore schedules */
  livenessWatch: (taskQueue: string) => `liveness-watch:${taskQueue}`,
  agentRun: (runId: string) => `agent-run:${runId}`,
  backgroundJob: (jobId: string) => `background-job:${jobId}`,
  blockerResolution: (blockerId: string) => `execution-blocker:${blockerId}`,
  webhookDelivery: (deliveryId: string) => `webhook-delivery:${deliveryId}`,
  /** one per inspection: many may ask the same host at once */
  hostProbe: (hostId: string) => `host-probe:${hostId}:${randomUUID()}`,
};
