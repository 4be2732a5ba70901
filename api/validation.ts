/**
 * Request schemas shared by routes: ids and bodies are validated (api/openapi.ts) before anything is
 * read or written.
 */
import { z } from 'zod';
import type { Actor } from '../domain/actor';
import { AppError } from '../domain/errors';
import { uuidSchema } from '../domain/ids';
import { safeString } from '../domain/safe-input';
import { ISSUE_STATUSES } from '../domain/statuses';
import { WATCHDOG_MODES } from '../domain/watchdog';
import { REPEAT_LIMIT_MAX } from '../domain/watchdog-recheck';
import { MONITOR_NOTE_MAX } from '../domain/issue-monitor';
import type { ScopedActor } from '../domain/actor';

/** Path parameters, each a UUID: as a route's `params` schema, a malformed id is a 400 naming it. */
export function idParams<K extends string>(...names: K[]) {
  return z
    .object(Object.fromEntries(names.map((name) => [name, uuidSchema])) as { [P in K]: typeof uuidSchema })
    .strict();
}

export function companyActor(actor: Actor): ScopedActor {
  if (actor.kind === 'admin')
    throw new AppError('forbidden', 'the admin token manages companies; use the company board token for this route');
  return actor;
}

export const titleSchema = safeString().trim().min(1, 'must not be empty').max(500);
export const issueStatusSchema = z.enum(ISSUE_STATUSES);
/** who or what unblocks a blocked issue; null clears it */
export const blockedReasonSchema = safeString()
  .trim()
  .min(1, 'must name who or what unblocks the issue')
  .max(2000)
  .nullable()
  .meta({ description: 'who or what unblocks the issue while it is blocked (an exit of its own)' });
export const watchdogBodySchema = z
  .object({
    agentId: uuidSchema,
    instructions: safeString().max(20_000).nullable().optional(),
    mode: z
      .enum(WATCHDOG_MODES)
      .optional()
      .meta({
        description:
          'review (wake the agent on the review task), observe (record and notify, wake nobody) or self (wake each ' +
          "stopped leaf's own assignee to verify it); omitted, review for a new watchdog and unchanged for an " +
          'existing one',
      }),
    repeatLimit: z
      .number()
      .int()
      .min(0)
      .max(REPEAT_LIMIT_MAX)
      .optional()
      .meta({
        description:
          'how many times one reviewed stop is re-checked (its agent woken again) once a conditional acceptance ' +
          'runs out, before the watchdog escalates to people instead; omitted, 3 for a new watchdog and unchanged ' +
          'for an existing one',
      }),
  })
  .strict();

/** `POST /api/companies/:companyId/issues` */
export const createIssueBody = z
  .object({
    title: titleSchema,
    parentId: uuidSchema.nullable().optional(),
    assigneeAgentId: uuidSchema.nullable().optional(),
    status: issueStatusSchema.optional(),
    blockedReason: blockedReasonSchema.optional(),
    watchdog: watchdogBodySchema.optional(),
  })
  .strict();
/** `PUT /api/issues/:issueId/monitor` */
export const monitorBodySchema = z
  .object({
    at: z.iso.datetime({ offset: true }).meta({
      description: "when the issue's assignee is woken (reason `issue_monitor`): 1 second to 90 days ahead",
    }),
    note: safeString()
      .max(MONITOR_NOTE_MAX)
      .nullable()
      .optional()
      .meta({ description: "for the woken run: its wake's context holds `monitor: { at, note, version }`" }),
  })
  .strict();
/** `PATCH /api/issues/:id` */
export const updateIssueBody = z
  .object({
    title: titleSchema.optional(),
    status: issueStatusSchema.optional(),
    assigneeAgentId: uuidSchema.nullable().optional(),
    blockedByIssueIds: z.array(uuidSchema).max(1000).optional(),
    blockedReason: blockedReasonSchema.optional(),
    comment: safeString().max(100_000).optional(),
    recheckAfter: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({
        description:
          'a watchdog review task only, with status done or in_review handed off: the review accepts the stop ' +
          'until then (1 second to 90 days ahead), and the same stop is evaluated again at that time',
      }),
  })
  .strict();
