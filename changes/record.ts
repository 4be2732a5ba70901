/**
 * Recording a change of a watched subtree's material state (issue 26), for every capability that makes one. The
 * row is written in the transaction of the write it describes, so a process dying after the commit loses nothing:
 * a worker's dispatcher (`dispatcher.ts`) signals the watchdogs above the changed issues.
 */
import type { Tx } from '../db/prisma';

/** The channel a recording transaction notifies; PostgreSQL delivers the notification at commit. */
export const CHANGES_CHANNEL = 'treewarden_subtree_changes';

/**
 * Records that `issueIds` changed materially (a fingerprint input: status, assignee, parent, blockers, interactions,
 * runs, execution blockers, holds, watchdog configuration); bookkeeping (titles, comments) records nothing. One
 * statement, so it is atomic even outside a transaction: the row and its NOTIFY commit together or not at all.
 */
export async function recordSubtreeChange(tx: Tx, issueIds: readonly string[], reason: string): Promise<void> {
  const unique = [...new Set(issueIds)];
  if (unique.length === 0) return;
  await tx.$executeRaw`
    WITH recorded AS (
      INSERT INTO "SubtreeChange" ("issueIds", reason) VALUES (${unique}::uuid[], ${reason}) RETURNING id
    )
    SELECT pg_notify(${CHANGES_CHANNEL}, '') FROM recorded`;
}
