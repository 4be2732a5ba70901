/**
 * Scenario 2's cost per class of change (issue 26), counted on the in-process world, where the statement counter
 * sees treewarden's connections: 50 isolated changes per class, each on a different watchdog, offered at 10 per
 * second, then quiescence. Per change, from the watchdog's history from the change on: signals, workflow tasks,
 * events, activity tasks and local activities (markers); statements are all treewarden sent until quiescence.
 * Bookkeeping (a title) must reach no watchdog; a material change that finds the reviewed stop again (a status set
 * to what it was) shows the cost of an evaluation; a waking one (a leaf → blocked) adds the wake and its review run.
 */
import type pg from 'pg';
import { workflowId } from '../domain/ids';
import { eventually, type Harness } from '../testing/harness';
import {
  inParallel,
  quiescence,
  row,
  statementCount,
  tallyHistory,
  type HistoryTally,
  type ResultRow,
} from './support';
import { applyChange, paced, type SmallWatchedTree } from './worlds';

const CHANGES_PER_CLASS = 50;
const RATE = 10;

interface ChangeClass {
  name: string;
  change: { status: string } | { title: string };
  wakes: boolean;
  /** issue 26's targets, as the most per change */
  targets: Partial<Record<'signals' | 'workflowTasks' | 'events' | 'statements', number>>;
  note?: string;
}

const CLASSES: ChangeClass[] = [
  {
    name: 'bookkeeping (title)',
    change: { title: 'renamed' },
    wakes: false,
    targets: { signals: 0, workflowTasks: 0, statements: 1 },
  },
  {
    name: 'material, no new stop (status set again)',
    change: { status: 'done' },
    wakes: false,
    targets: { workflowTasks: 1.5, events: 8 },
  },
  {
    name: 'material, waking (leaf → blocked)',
    change: { status: 'blocked' },
    wakes: true,
    targets: { workflowTasks: 1.5, events: 8 },
    note: "the review run's start and end are recorded but reach no watchdog (domain/change-reach.ts)",
  },
];

/** `trees` must hold 3 × 50 watchdogs no other measurement changes. */
export async function changeClasses(h: Harness, pool: pg.Pool, trees: SmallWatchedTree[]): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  for (const [k, c] of CLASSES.entries()) {
    const mine = trees.slice(k * CHANGES_PER_CLASS, (k + 1) * CHANGES_PER_CLASS);
    const before = statementCount();
    const changedAt = await paced(mine.length, RATE, (i) => applyChange(h, pool, mine[i].leafId, c.change));
    const woken = async () => {
      const { rows: triggered } = await pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM "Watchdog" WHERE id = ANY($1::uuid[]) AND "lastTriggeredAt" >= $2`,
        [mine.map((t) => t.watchdogId), new Date(changedAt[0])],
      );
      return Number(triggered[0].n);
    };
    if (c.wakes)
      await eventually(`every ${c.name} change to wake`, async () => (await woken()) === mine.length, 120_000);
    await quiescence();
    if (!c.wakes && (await woken()) !== 0) throw new Error(`scenario 2: ${c.name} changes woke ${await woken()}`);
    const statements = (statementCount() - before) / mine.length;
    const tallies: HistoryTally[] = [];
    await inParallel(mine, 16, async (t, i) => {
      const [tally] = await tallyHistory(h.services.client, workflowId.taskWatchdog(t.rootId), [
        { from: changedAt[i], to: Infinity },
      ]);
      tallies.push(tally);
    });
    const s = `2 per change: ${c.name}`;
    const per = (metric: keyof HistoryTally) => tallies.map((t) => t[metric]);
    const atMost = (limit: number | undefined) =>
      limit === undefined ? undefined : { text: `≤ ${limit}`, ok: (m: number) => m <= limit };
    rows.push(
      row(s, 'signals', 'signals', per('signals'), atMost(c.targets.signals)),
      row(s, 'workflow tasks', 'tasks', per('workflowTasks'), atMost(c.targets.workflowTasks), c.note),
      row(s, 'history events', 'events', per('events'), atMost(c.targets.events), c.note),
      row(s, 'activity tasks', 'tasks', per('activitiesScheduled')),
      row(s, 'local activities (markers)', 'markers', per('markers')),
      row(s, 'statements', 'stmts', [statements], atMost(c.targets.statements), 'until quiescence'),
    );
  }
  return rows;
}
