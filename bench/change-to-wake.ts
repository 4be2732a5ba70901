/**
 * Scenario 2: 1,000 active watchdogs on one worker, changes offered at 50 per second, one change per
 * watched subtree per round. Bookkeeping changes (a title) must wake nobody: they show what noticing
 * a change costs by itself, the figure with the ≤ 3 target. In the mixed rounds every tenth change is
 * material (a leaf's status: a new stop) and must wake the watchdog agent; for those we measure
 * change-to-wake latency, from the moment the change was made to the wake's trigger time. One in ten
 * rather than all: 50 wakes a second would mean 50 agent runs a second, which measures the agents'
 * run workflows on this machine, not how fast a watchdog notices. Statements per change count
 * everything treewarden sent between the first change and quiescence.
 */
import type pg from 'pg';
import { eventually, type Harness } from '../testing/harness';
import { log, percentile, quiescence, row, statementCount, type ResultRow } from './support';
import { applyChange, paced, type SmallWatchedTree } from './worlds';

const RATE = 50;
const ROUNDS = 3;
const BOOKKEEPING_CHANGES = 500;
/** change i of a mixed round is material when i % MATERIAL_EVERY === round: a fresh set of watchdogs each round */
const MATERIAL_EVERY = 10;

export async function changeToWake(h: Harness, pool: pg.Pool, trees: SmallWatchedTree[]): Promise<ResultRow[]> {
  const bookkeeping: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = statementCount();
    await paced(BOOKKEEPING_CHANGES, RATE, (i) => applyChange(h, pool, trees[i].leafId, { title: `renamed ${round}` }));
    await quiescence();
    bookkeeping.push((statementCount() - before) / BOOKKEEPING_CHANGES);
  }
  const { rows: woken } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "WakeRequest" WHERE reason = 'task_watchdog_stopped_subtree'`,
  );
  if (Number(woken[0].n) !== 0) throw new Error(`scenario 2: bookkeeping changes woke ${woken[0].n} agents`);
  log(`  bookkeeping rounds done`);

  const p50: number[] = [];
  const p99: number[] = [];
  const mixed: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const material = (i: number) => i % MATERIAL_EVERY === round;
    const before = statementCount();
    const changedAt = await paced(trees.length, RATE, (i) =>
      applyChange(h, pool, trees[i].leafId, material(i) ? { status: 'blocked' } : { title: `mixed ${round}` }),
    );
    const since = new Date(changedAt[0]);
    const expected = trees.filter((_, i) => material(i)).length;
    const triggered = async () => {
      const { rows } = await pool.query<{ id: string; at: Date }>(
        `SELECT id, "lastTriggeredAt" AS at FROM "Watchdog" WHERE "lastTriggeredAt" >= $1`,
        [since],
      );
      return rows;
    };
    await eventually(
      'every materially changed watchdog to wake its agent',
      async () => (await triggered()).length === expected,
      600_000,
    );
    await quiescence(); // the review runs the wakes started, and the evaluations they cause, are part of the cost
    const at = new Map((await triggered()).map((r) => [r.id, r.at.getTime()]));
    const latencies = trees.flatMap((t, i) => (material(i) ? [at.get(t.watchdogId)! - changedAt[i]] : []));
    p50.push(percentile(latencies, 50));
    p99.push(percentile(latencies, 99));
    mixed.push((statementCount() - before) / trees.length);
  }
  const s = '2 change→wake, 1k watchdogs, 50/s';
  return [
    row(s, 'change-to-wake p50', 'ms', p50, undefined, 'includes the 500 ms debounce'),
    row(s, 'change-to-wake p99', 'ms', p99, undefined, '100 waking changes per round'),
    row(
      s,
      'statements per bookkeeping change',
      'stmts',
      bookkeeping,
      { text: '≤ 3', ok: (m) => m <= 3 },
      'fan-out lookup + one evaluation',
    ),
    row(
      s,
      'statements per change, 1 in 10 waking',
      'stmts',
      mixed,
      undefined,
      'incl. the wakes, their review runs and the evaluations those cause',
    ),
  ];
}
