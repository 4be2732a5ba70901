/** Response shape of an issue's one-shot monitor. */
import { z } from 'zod';
import { ISSUE_MONITOR_STATUSES } from '../domain/issue-monitor';
import { named, timestamp, uuid } from './schemas';

export const IssueMonitor = named(
  'IssueMonitor',
  z.object({
    id: uuid,
    companyId: uuid,
    issueId: uuid,
    at: timestamp.meta({ description: "when it wakes the issue's assignee" }),
    note: z.string().nullable().meta({ description: "given to the woken run in its wake's context (`monitor.note`)" }),
    status: z.enum(ISSUE_MONITOR_STATUSES).meta({
      description:
        '`pending` until its time; then `fired` (the assignee was woken: `wakeRequestId`) or `ended` (the issue was ' +
        'done, cancelled or unassigned by then); `cleared` by a DELETE',
    }),
    version: z.number().int().meta({ description: 'grows with every set, refresh and clear' }),
    wakeRequestId: uuid.nullable(),
    endedAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  }),
);
