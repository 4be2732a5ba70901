/**
 * Scenario 3: what 1,000 idle watchdogs cost when nothing changes. Ten production minutes are one
 * safety-tick interval (TREEWARDEN_WATCHDOG_TICK_MS = 600,000); the harness runs with the tick
 * compressed to IDLE_TICK_MS (10×), so one window of IDLE_TICK_MS is "ten minutes compressed by
 * configuration". 10× rather than more: 1,000 ticks a minute is what this 2-core machine keeps up with.
 * Target: safety ticks only, i.e. no signal, and one evaluation per fired safety-tick timer.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { workflowId } from '../domain/ids';
import type { Harness } from '../testing/harness';
import { addTallies, emptyTally, inParallel, log, row, statementCount, tallyHistory, type ResultRow } from './support';
import { type SmallWatchedTree } from './worlds';

/** the documented default of TREEWARDEN_WATCHDOG_TICK_MS (domain/config.ts): ten minutes */
export const PRODUCTION_TICK_MS = 600_000;
export const IDLE_TICK_MS = PRODUCTION_TICK_MS / 10;
const WINDOWS = 3;

export interface IdleCost {
  rows: ResultRow[];
  /** median statements one safety tick costs, for scenario 7's per-minute figure */
  statementsPerTick: number;
}

export async function idleCost(h: Harness, trees: SmallWatchedTree[]): Promise<IdleCost> {
  const windows: { from: number; to: number; statements: number }[] = [];
  for (let i = 0; i < WINDOWS; i++) {
    const from = Date.now();
    const before = statementCount();
    await sleep(IDLE_TICK_MS);
    windows.push({ from, to: Date.now(), statements: statementCount() - before });
  }
  log('  idle windows done; tallying 1,000 histories');
  const totals = windows.map(emptyTally);
  await inParallel(trees, 16, async (t) => {
    const tallies = await tallyHistory(h.services.client, workflowId.taskWatchdog(t.rootId), windows);
    tallies.forEach((tally, i) => (totals[i] = addTallies(totals[i], tally)));
  });
  const perTick = windows.map((w, i) => w.statements / Math.max(1, totals[i].timersFired));
  // A tick whose timer fires at a window's end evaluates in the next one, so "one evaluation per
  // tick" is checked over all windows together, where those edges are a rounding error.
  const all = totals.reduce(addTallies, emptyTally());
  const evaluationsPerTick = all.activitiesScheduled / Math.max(1, all.timersFired);
  const onlyTicks = all.signals === 0 && Math.abs(evaluationsPerTick - 1) <= 0.05;
  const s = `3 idle, 1k watchdogs, 10 min (tick ${IDLE_TICK_MS / 1000} s)`;
  return {
    statementsPerTick: perTick.sort((a, b) => a - b)[Math.floor(perTick.length / 2)],
    rows: [
      row(
        s,
        'statements per 10 minutes',
        'stmts',
        windows.map((w) => w.statements),
      ),
      row(
        s,
        'safety ticks per 10 minutes',
        'ticks',
        totals.map((t) => t.timersFired),
      ),
      row(
        s,
        'evaluations per safety tick',
        'evals',
        [evaluationsPerTick],
        { text: 'safety ticks only', ok: () => onlyTicks },
        `pooled over the windows; ${all.signals} signals`,
      ),
      row(
        s,
        'workflow tasks per 10 minutes',
        'tasks',
        totals.map((t) => t.workflowTasks),
      ),
      row(s, 'statements per tick', 'stmts', perTick),
      row(
        s,
        'workflow tasks per tick',
        'tasks',
        totals.map((t) => t.workflowTasks / Math.max(1, t.timersFired)),
      ),
    ],
  };
}
