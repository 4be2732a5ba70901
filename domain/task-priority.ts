/**
 * Temporal priority and fairness (docs/fleet.md, "Fairness between companies"). Every company shares one task queue;
 * with `matching.enableFairness` the server dispatches a backlog by priority first (lower goes first, 1..5, 3 when
 * unset), then round-robins between fairness keys within a priority in proportion to their weights. The fairness key is
 * the company id, so a company's thousand tasks queue behind each other, never in front of another company's one.
 * Activities inherit their workflow's priority and key; only the kinds below that must jump ahead set their own.
 */
import type { Priority } from '@temporalio/common';

/** The kinds of work that go in a different order, first to last. */
export const TASK_PRIORITY = {
  /**
   * stopping a run's processes and settling it, and a hold's workflow (its pause and its release): frees a host and a
   * company's cap, and an operator waits for it, however long the backlog of runs it brakes
   */
  stop: 1,
  /** a watchdog's evaluation: short, and it decides which review runs to start */
  evaluation: 2,
  /** an agent run, a background job, a resolved blocker's resume: the default */
  run: 3,
  /** a webhook delivery: nobody inside treewarden waits for it */
  delivery: 4,
} as const;
export type TaskPriorityKind = keyof typeof TASK_PRIORITY;

/** A company's work of one kind. The id is a UUID (36 bytes; the server allows 64). */
export function companyPriority(companyId: string, kind: TaskPriorityKind): Priority {
  return { priorityKey: TASK_PRIORITY[kind], fairnessKey: companyId };
}

/** What the Temporal UI shows under a workflow's summary: who it runs for, and in which order. */
export function priorityDetails(companyId: string, kind: TaskPriorityKind): string {
  return `company ${companyId} · priority ${TASK_PRIORITY[kind]} (${kind}) · fairness key: the company id`;
}
