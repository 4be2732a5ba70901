/**
 * Scenario 7: the peer's way. Paperclip's heartbeat scheduler reconciles every active watchdog on a
 * periodic tick (HEARTBEAT_SCHEDULER_INTERVAL_MS, 30 s by default): load the active rows, walk each
 * subtree, classify it. That loop is implemented here, in bench code only, over the same 1,000
 * watchdogs and the same change stream that treewarden handles event-driven, side by side in the
 * same windows. Each side's statements are told apart by connection (the peer has its own pool).
 *
 * Kept favourable to the peer: its steady state is read-only (Paperclip writes nothing unless a new
 * stop triggers), and its on-mutation reconciliation (reconcileForIssueAndAncestors) is left out, so
 * changes cost it nothing. Treewarden's side pays for every change it is told about, plus its safety
 * ticks: one per watchdog per ten minutes (the default TREEWARDEN_WATCHDOG_TICK_MS), at the per-tick
 * cost scenario 3 measured in this same run (ticks are kept out of this scenario's world, see run.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import { classifySubtree } from '../domain/watchdog';
import { PrismaClient } from '../generated/prisma/client';
import { loadEvaluationInput } from '../watchdogs/subtree-snapshot';
import type { Harness } from '../testing/harness';
import { PRODUCTION_TICK_MS } from './idle-cost';
import { databaseUrlOf, ms, quiescence, row, statementCount, taggedPool, type ResultRow } from './support';
import { applyChange, paced, type SmallWatchedTree } from './worlds';

const PEER_INTERVAL_MS = 30_000;
const WINDOWS = 3;
const CHANGES_PER_SECOND = 5;

/** One Paperclip-style reconciliation pass over every active watchdog. */
async function reconcileAll(db: PrismaClient, firstRunGraceMs: number): Promise<void> {
  const watchdogs = await db.watchdog.findMany({ where: { status: 'active' } });
  for (const w of watchdogs) {
    // the same one-statement read treewarden's evaluation uses, so the comparison is the scheduling, not the query
    const { nodes } = await loadEvaluationInput(db, w.id);
    classifySubtree(nodes, { agentId: w.agentId, instructions: w.instructions }, new Date(), firstRunGraceMs);
  }
}

export async function peerPolling(
  h: Harness,
  pool: pg.Pool,
  trees: SmallWatchedTree[],
  treewardenStatementsPerTick: number,
): Promise<ResultRow[]> {
  const peerPool = taggedPool(databaseUrlOf(h), 'peer', 2);
  const peer = new PrismaClient({ adapter: new PrismaPg(peerPool) });
  const windowChanges = (CHANGES_PER_SECOND * PEER_INTERVAL_MS) / 1000;
  const perMinute = 60_000 / PEER_INTERVAL_MS;
  const ticksPerMinute = (trees.length * 60_000) / PRODUCTION_TICK_MS;
  const peerPerMinute: number[] = [];
  const treewardenPerMinute: number[] = [];
  const ratios: number[] = [];
  const idleRatios: number[] = [];
  const passMs: number[] = [];
  try {
    for (let w = 0; w < WINDOWS; w++) {
      const from = Date.now();
      const tw0 = statementCount();
      const peer0 = statementCount('peer');
      const pass = (async () => {
        const start = process.hrtime.bigint();
        await reconcileAll(peer, h.services.config.TREEWARDEN_FIRST_RUN_GRACE_MS);
        passMs.push(ms(start));
      })();
      await paced(windowChanges, CHANGES_PER_SECOND, (i) =>
        applyChange(h, pool, trees[(w * windowChanges + i) % trees.length].leafId, { title: `peer window ${w}` }),
      );
      await pass;
      await sleep(Math.max(0, from + PEER_INTERVAL_MS - Date.now()));
      await quiescence(); // treewarden's reactions to the window's last changes belong to the window
      const peerMin = (statementCount('peer') - peer0) * perMinute;
      const twMin = (statementCount() - tw0) * perMinute + ticksPerMinute * treewardenStatementsPerTick;
      peerPerMinute.push(peerMin);
      treewardenPerMinute.push(twMin);
      ratios.push(peerMin / twMin);
      // with no changes treewarden pays its safety ticks only, while the peer's pass costs the same
      idleRatios.push(peerMin / (ticksPerMinute * treewardenStatementsPerTick));
    }
  } finally {
    await peer.$disconnect();
    await peerPool.end();
  }
  const s = `7 peer polling vs events, 1k watchdogs, ${CHANGES_PER_SECOND} changes/s`;
  return [
    row(s, 'peer (30 s reconcile tick) statements/min', 'stmts/min', peerPerMinute),
    row(
      s,
      'treewarden (events + safety ticks) statements/min',
      'stmts/min',
      treewardenPerMinute,
      undefined,
      `ticks: ${ticksPerMinute}/min at ${treewardenStatementsPerTick.toFixed(1)} stmts each (scenario 3)`,
    ),
    row(s, 'peer ÷ treewarden (same windows)', '×', ratios),
    row(s, 'peer ÷ treewarden if nothing changed', '×', idleRatios, undefined, 'treewarden: safety ticks only'),
    row(s, 'one peer reconciliation pass', 'ms', passMs),
  ];
}
