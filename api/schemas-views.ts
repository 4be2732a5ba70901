/** Response shapes of the views for people: the issue tree, the company overview and an issue's activity feed. */
import { z } from 'zod';
import { ISSUE_STATUSES, RUN_STATUSES } from '../domain/statuses';
import { WATCHDOG_MODES } from '../domain/watchdog';
import type { WatchdogBadge } from '../issues/tree-view';
import { jsonObject, named, timestamp, uuid } from './schemas';

/** `GET /api/issues/:id/tree`: an issue with its badges, and its children to the depth asked for. */
export const TreeNode: z.ZodType<TreeNodeShape> = named(
  'TreeNode',
  z.object({
    id: uuid,
    title: z.string(),
    status: z.enum(ISSUE_STATUSES),
    assignee: z.object({ id: uuid, name: z.string() }).nullable(),
    childCount: z.number(),
    run: z
      .object({
        id: uuid,
        status: z.enum(RUN_STATUSES),
        live: z.boolean(),
        silentState: z.string().nullable(),
        failureState: z.string().nullable(),
        wakeReason: z.string().meta({ description: 'why it was woken (`liveness_recovery`: a stall was recovered)' }),
      })
      .nullable(),
    holds: z.array(z.object({ id: uuid })).meta({ description: 'active holds rooted at this issue' }),
    heldBy: z.array(uuid).meta({ description: 'active holds covering it (rooted here or above)' }),
    watchdog: z
      .object({
        id: uuid,
        mode: z.enum(WATCHDOG_MODES),
        lastState: z.string().nullable(),
        triggerCount: z.number(),
        reviewIssueId: uuid.nullable().meta({ description: 'its review task (the badge links to it)' }),
      })
      .nullable(),
    reviewOf: z
      .object({ watchedIssueId: uuid })
      .nullable()
      .meta({ description: "a watchdog's review task: the watched issue it reviews" }),
    monitor: z
      .object({ at: z.string().meta({ format: 'date-time' }), note: z.string().nullable() })
      .nullable()
      .meta({ description: 'its pending one-shot monitor: wakes its assignee at `at`' }),
    blockers: z.array(z.object({ id: uuid, runId: uuid.nullable(), nextAction: z.string() })),
    get children() {
      return z.array(TreeNode).nullable().meta({ description: 'null: not expanded in this answer' });
    },
    moreChildren: z.number(),
  }),
);
interface TreeNodeShape {
  id: string;
  title: string;
  status: (typeof ISSUE_STATUSES)[number];
  assignee: { id: string; name: string } | null;
  childCount: number;
  run: {
    id: string;
    status: (typeof RUN_STATUSES)[number];
    live: boolean;
    silentState: string | null;
    failureState: string | null;
    wakeReason: string;
  } | null;
  holds: { id: string }[];
  heldBy: string[];
  watchdog: WatchdogBadge | null;
  reviewOf: { watchedIssueId: string } | null;
  monitor: { at: string; note: string | null } | null;
  blockers: { id: string; runId: string | null; nextAction: string }[];
  children: TreeNodeShape[] | null;
  moreChildren: number;
}

const titled = { id: uuid, issueId: uuid, issueTitle: z.string() };
export const CompanyOverview = named(
  'CompanyOverview',
  z.object({
    company: z.object({ id: uuid, name: z.string() }),
    trees: z.array(
      z.object({
        id: uuid,
        title: z.string(),
        status: z.enum(ISSUE_STATUSES),
        childCount: z.number(),
        activeHolds: z.array(z.object({ id: uuid, reason: z.string().nullable(), createdAt: timestamp })),
      }),
    ),
    watchdogs: z.array(
      z.object({
        ...titled,
        lastState: z.string().nullable(),
        triggerCount: z.number(),
        lastTriggeredAt: timestamp.nullable(),
      }),
    ),
    runs: z.array(
      z.object({
        ...titled,
        status: z.enum(RUN_STATUSES),
        silentState: z.string().nullable(),
        host: z.string().nullable(),
        startedAt: timestamp.nullable(),
      }),
    ),
    blockers: z.array(
      z.object({
        ...titled,
        runId: uuid.nullable(),
        cause: z.string(),
        nextAction: z.string(),
        createdAt: timestamp,
      }),
    ),
    findings: z.array(
      z.object({
        id: uuid,
        runId: uuid,
        issueId: uuid,
        verdict: z.string(),
        runStatus: z.enum(RUN_STATUSES),
        failureState: z.string().nullable(),
        createdAt: timestamp,
      }),
    ),
  }),
);

const WatchdogRunFacts = z
  .object({ watchdogId: uuid, watchedIssueId: uuid, reviewIssueId: uuid, runId: uuid, fingerprint: z.string() })
  .meta({
    description: 'the five facts of a watchdog review run: its watchdog, watched issue, review task, run, stop',
  });
export const ActivityItem = named(
  'ActivityItem',
  z.object({
    id: uuid,
    action: z.string().meta({ description: '`issue.created`, `issue.updated`, `issue.comment_added`, ...' }),
    entityType: z.string(),
    entityId: z.string(),
    actor: z.object({
      kind: z.enum(['admin', 'board', 'run', 'system']),
      agentId: uuid.nullable().meta({ description: "a run's agent" }),
      runId: uuid.nullable(),
    }),
    watchdogRun: WatchdogRunFacts.nullable().meta({ description: 'set on every write of a watchdog review run' }),
    details: jsonObject,
    createdAt: timestamp,
  }),
);
export const ActivityPage = named(
  'ActivityPage',
  z.object({
    items: z.array(ActivityItem).meta({ description: 'newest first' }),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'pass as `cursor` for the next (older) page; null: no more' }),
  }),
);
