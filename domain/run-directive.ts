/**
 * What treewarden itself tells a run (issue 24): the review facts of a watchdog wake, the facts of a resume, a
 * capsule. It lives in the server-written `directive` column, never in the waker's `context`, whose keys of the
 * same names are refused on the way in, so no caller can pose as the server. Authority is not in here either: a
 * review run's scope is its `reviewWatchdogId` relation, re-read on every request (access/api-tokens.ts).
 */
import { z } from 'zod';
import { jsonRecord, safeString } from './safe-input';

/** Keys of a run's context file that only the server may write; a wake's `context` naming one is a 400. */
export const RESERVED_CONTEXT_KEYS = [
  'taskWatchdog',
  'capsule',
  'checkpoint',
  'holdId',
  'interruptedRunId',
  'reconciliation',
] as const;

/** Wake reasons the server gives its own wakes; a caller naming one is a 400 (they select a run's capsule). */
export const RESERVED_WAKE_REASONS = [
  'task_watchdog_stopped_subtree',
  'task_watchdog_self_check',
  'issue_tree_resumed',
  'issue_tree_released',
] as const;

/** A wake's `context` as a caller may send it: any safe JSON record without a reserved top-level key. */
export const callerContext = () =>
  jsonRecord().superRefine((context, ctx) => {
    for (const key of RESERVED_CONTEXT_KEYS)
      if (Object.hasOwn(context, key))
        ctx.addIssue({ code: 'custom', path: [key], message: 'is reserved: only treewarden writes it' });
  });

/** A wake's `reason` as a caller may send it: not one the server gives its own wakes. */
export const callerWakeReason = () =>
  safeString()
    .min(1)
    .max(100)
    .refine((reason) => !(RESERVED_WAKE_REASONS as readonly string[]).includes(reason), {
      error: (issue) => `"${String(issue.input)}" is a reason only treewarden gives its own wakes`,
    });

const ids = z.array(z.string()).readonly();
const stoppedLeafSchema = z.object({
  id: z.string(),
  status: z.string(),
  blockerIds: ids,
  executionBlockerIds: ids,
  pendingInteractionIds: ids,
});
export type DirectiveStoppedLeaf = z.infer<typeof stoppedLeafSchema>;

/** The facts of a review wake, as the watchdog agent reads them (extra keys such as `mandate` pass through). */
const reviewSchema = z.looseObject({
  watchdogId: z.string(),
  watchedIssueId: z.string(),
  reviewIssueId: z.string(),
  fingerprint: z.string(),
  stoppedLeaves: z.array(stoppedLeafSchema),
});

const directiveSchema = z.looseObject({
  taskWatchdog: reviewSchema.optional(),
  holdId: z.string().nullable().optional(),
  interruptedRunId: z.string().optional(),
  checkpoint: z.unknown().optional(),
  reconciliation: z.object({ blockerId: z.string(), resolution: z.string().nullable() }).optional(),
  capsule: z.unknown().optional(),
});
export type RunDirective = z.infer<typeof directiveSchema>;

/**
 * A stored directive, or `{}` with the reason when it does not have the expected shape (a row written by older
 * code): reading a directive is never what crashes a run.
 */
export function parseDirective(stored: unknown): { directive: RunDirective; problem: string | null } {
  if (stored === null || stored === undefined) return { directive: {}, problem: null };
  const parsed = directiveSchema.safeParse(stored);
  return parsed.success ? { directive: parsed.data, problem: null } : { directive: {}, problem: parsed.error.message };
}

/** The context file an agent reads: the waker's data with the server's directive over it (their keys never meet). */
export const agentContext = (context: unknown, directive: RunDirective): Record<string, unknown> => ({
  ...(context && typeof context === 'object' && !Array.isArray(context) ? context : {}),
  ...directive,
});
