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
import { watchdogsAbove } from '../tree/queries';
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
      const watchdogs = await watchdogsAbove(tx, [...reasonsOf.keys()]);
      // committed before the signals, outside the round: an evaluation the signal starts reads the new version, and
      // a round that fails afterwards only makes a later safety tick evaluate once more
      const reached = watchdogs.map((w) => w.id);
      if (reached.length > 0)
        await deps.db.$executeRaw`
          UPDATE "Watchdog" SET "changeVersion" = "changeVersion" + 1 WHERE id = ANY(${reached}::uuid[])`;
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
