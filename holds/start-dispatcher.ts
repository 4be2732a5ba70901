/**
 * Every hold gets its workflow (issue 44): a pause commits its hold's row owing one (`workflowStartedAt` null) and
 * announces it; the pause starts the workflow itself (the quick path), and a worker's dispatcher starts every owed
 * one and records it started, at the commit's NOTIFY, at its start and at each reconnection (`db/outbox.ts`). So a
 * pause whose API lost Temporal, or died, between its commit and its start leaves no hold that stops nothing and can
 * never be released: its workflow starts, applies the pause, and takes the release. A start is idempotent (the
 * workflow id is the hold's), so a hold started by both the pause and a dispatcher runs once.
 */
import { startOutboxDispatcher } from '../db/outbox';
import type { Tx } from '../db/prisma';
import { forEachConcurrently } from '../domain/concurrency';
import type { Deps } from '../runtime/deps';

/** The channel a pause's transaction notifies; PostgreSQL delivers the notification at commit. */
export const HOLD_STARTS_CHANNEL = 'treewarden_hold_starts';

/** Holds taken per round: a full batch goes on at once with the next. */
const DISPATCH_BATCH = 100;

/** Starts in flight per round: one round trip to Temporal each. */
const START_CONCURRENCY = 8;

/** The round's transaction holds its rows while it starts their workflows: bounded, so a hung start fails it. */
const ROUND_TIMEOUT_MS = 60_000;

/** In the pause's transaction: announces the hold it creates, which owes its workflow until a round records it. */
export async function announceHoldStart(tx: Tx): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${HOLD_STARTS_CHANNEL}, '')`;
}

/**
 * One round: takes up to a batch of holds owed their workflow (rows another worker's round holds are skipped),
 * starts each workflow, then records them started, in one transaction: a round that fails or dies leaves them owed.
 */
export async function dispatchHoldStarts(deps: Deps): Promise<number> {
  return deps.db.$transaction(
    async (tx) => {
      const owed = await tx.$queryRaw<{ id: string; companyId: string; rootIssueId: string; title: string }[]>`
        SELECT h.id, h."companyId", h."rootIssueId", i.title FROM "TreeHold" h JOIN "Issue" i ON i.id = h."rootIssueId"
        WHERE h."workflowStartedAt" IS NULL ORDER BY h."createdAt" LIMIT ${DISPATCH_BATCH} FOR UPDATE OF h SKIP LOCKED`;
      if (owed.length === 0) return 0;
      await forEachConcurrently(owed, START_CONCURRENCY, (hold) =>
        deps.orchestrator.launchHold({
          holdId: hold.id,
          companyId: hold.companyId,
          rootIssueId: hold.rootIssueId,
          title: hold.title,
        }),
      );
      await tx.$executeRaw`
        UPDATE "TreeHold" SET "workflowStartedAt" = now() WHERE id = ANY(${owed.map((h) => h.id)}::uuid[])`;
      return owed.length;
    },
    { timeout: ROUND_TIMEOUT_MS },
  );
}

/** Starts owed hold workflows at start and at each announcement until stopped. */
export function startHoldDispatcher(deps: Deps, retryMs: number): { stop(): Promise<void> } {
  return startOutboxDispatcher(deps, {
    channel: HOLD_STARTS_CHANNEL,
    round: () => dispatchHoldStarts(deps),
    batch: DISPATCH_BATCH,
    retryMs,
    failure: 'starting the workflows of holds that are owed one failed; trying again',
  });
}
