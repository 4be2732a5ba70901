/**
 * Delivers recorded subtree changes (`record.ts`) to the watchdogs above them: one `subtreeChanged` signal per
 * affected watchdog per round, with the reasons of that round's changes under it. Rounds run in every worker at
 * NOTIFY, at start and on reconnection (`db/outbox.ts`; nothing polls). Delivery is at least once: a round deletes
 * its rows in a transaction that commits only after its signals, so a round that fails or a worker that dies
 * mid-round leaves them (their locks go with its connection) for the next round, and a watchdog signalled twice
 * only evaluates again. A round with a change that can end an issue's last live path also tells the liveness watch
 * (domain/liveness.ts), at most twice a minute per worker (livenessNoticeIntervalMs).
 */
import { startOutboxDispatcher } from '../db/outbox';
import { forEachConcurrently, throttleTrailing } from '../domain/concurrency';
import { livenessNoticeIntervalMs, mayEndALivePath } from '../domain/liveness';
import { AWAITING_REVIEW_END_STATE, roundReach } from '../domain/change-reach';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { watchdogsAbove, type WatchdogAbove } from '../tree/queries';
import type { Deps } from '../runtime/deps';
import { CHANGES_CHANNEL } from './record';

/** Changes taken per round: a full batch goes on at once with the next. */
const DISPATCH_BATCH = 200;

/** Signals in flight per round: one round trip to Temporal each. */
const SIGNAL_CONCURRENCY = 16;

/** The round's transaction holds its rows while it signals: bounded, so a hung signal fails the round. */
const ROUND_TIMEOUT_MS = 60_000;

/**
 * One round: takes up to a batch of changes (rows another worker's round holds are skipped: that round delivers
 * them, or leaves them when it fails), looks up the watchdogs above all of them at once, signals each, then deletes
 * the rows, all in one transaction; `livePathsMayHaveEnded` is called when a change can end a live path. Returns how
 * many changes it delivered.
 */
export async function dispatchSubtreeChanges(deps: Deps, livePathsMayHaveEnded = () => {}): Promise<number> {
  return deps.db.$transaction(
    async (tx) => {
      const changes = await tx.$queryRaw<{ id: bigint; issueIds: string[]; reason: string }[]>`
        DELETE FROM "SubtreeChange" WHERE id IN (
          SELECT id FROM "SubtreeChange" ORDER BY id LIMIT ${DISPATCH_BATCH} FOR UPDATE SKIP LOCKED
        )
        RETURNING id, "issueIds"::text[] AS "issueIds", reason`;
      if (changes.length === 0) return 0;
      if (changes.some((change) => mayEndALivePath(change.reason))) livePathsMayHaveEnded();
      const reasonsOf = new Map<string, Set<string>>();
      for (const change of changes)
        for (const issueId of change.issueIds) {
          const reasons = reasonsOf.get(issueId) ?? new Set<string>();
          reasonsOf.set(issueId, reasons.add(change.reason));
        }
      const above = await watchdogsAbove(tx, [...reasonsOf.keys()]);
      const watchdogs = await reachedWatchdogs(deps, above, reasonsOf);
      await forEachConcurrently(watchdogs, SIGNAL_CONCURRENCY, (w) =>
        deps.orchestrator.subtreeChanged(
          { watchdogId: w.id, companyId: w.companyId, issueId: w.issueId, title: w.issue.title },
          [...new Set(w.changedIssueIds.flatMap((id) => [...reasonsOf.get(id)!]))].sort().join(','),
        ),
      );
      return changes.length;
    },
    { timeout: ROUND_TIMEOUT_MS },
  );
}

/**
 * The watchdogs a round signals: those its changes can reach (domain/change-reach.ts), their `changeVersion` bumped
 * first. Committed before the signals, outside the round: an evaluation the signal starts reads the new version, and a
 * round that fails afterwards only makes a later safety tick evaluate once more. A review run's end reaches its
 * watchdog only while that one holds a new stop back for it; that is read in the same statement, on the row as the
 * evaluation holding it back committed it (the update waits for its lock, and a finished run's change is recorded
 * after the run settled, so an evaluation that still saw the run live holds that lock or has committed).
 */
async function reachedWatchdogs(
  deps: Deps,
  above: WatchdogAbove[],
  reasonsOf: Map<string, Set<string>>,
): Promise<WatchdogAbove[]> {
  const reach = new Map(
    above.map((w) => {
      const reviewTasks = new Set(w.reviewTaskIds);
      const issues = w.changedIssueIds.map((id) => ({
        id,
        originKind: reviewTasks.has(id) ? TASK_WATCHDOG_ORIGIN : null,
        reasons: reasonsOf.get(id)!,
      }));
      return [w.id, roundReach(w, issues)] as const;
    }),
  );
  const signalled = above.filter((w) => reach.get(w.id) === 'signal').map((w) => w.id);
  const ifAwaiting = above.filter((w) => reach.get(w.id) === 'if_awaiting_review_end').map((w) => w.id);
  if (signalled.length + ifAwaiting.length === 0) return [];
  // a watchdog that turns out not to await its review's end is updated unchanged: the condition is in the SET, not
  // the WHERE, so the update waits for a lock held by an evaluation and reads the state that one committed
  const rows = await deps.db.$queryRaw<{ id: string; reached: boolean }[]>`
    UPDATE "Watchdog" SET "changeVersion" = "changeVersion" +
      CASE WHEN id = ANY(${signalled}::uuid[]) OR "lastEvaluation"->>'state' = ${AWAITING_REVIEW_END_STATE}
        THEN 1 ELSE 0 END
    WHERE id = ANY(${[...signalled, ...ifAwaiting]}::uuid[])
    RETURNING id::text, (id = ANY(${signalled}::uuid[])
      OR "lastEvaluation"->>'state' = ${AWAITING_REVIEW_END_STATE}) AS "reached"`;
  const reached = new Set(rows.filter((r) => r.reached).map((r) => r.id));
  return above.filter((w) => reached.has(w.id));
}

/**
 * Delivers recorded changes at start and at each announcement until stopped. A failed liveness notice is only
 * logged: the next notice, or the safety scan (liveness/schedule.ts), brings the pass it asked for.
 */
export function startChangeDispatcher(deps: Deps, retryMs: number): { stop(): Promise<void> } {
  const liveness = throttleTrailing(
    () => deps.orchestrator.livePathsMayHaveEnded(),
    livenessNoticeIntervalMs(deps.config.TREEWARDEN_LIVENESS_STALL_MS),
    (error) => deps.log.warn({ err: error }, 'telling the liveness watch failed; the next change or scan tells it'),
  );
  const dispatcher = startOutboxDispatcher(deps, {
    channel: CHANGES_CHANNEL,
    round: () => dispatchSubtreeChanges(deps, liveness.request),
    batch: DISPATCH_BATCH,
    retryMs,
    failure: 'delivering subtree changes to their watchdogs failed; trying again',
  });
  return {
    async stop() {
      await dispatcher.stop();
      liveness.stop();
    },
  };
}
