/**
 * Scenario 2 as users run it (issue 26): the `npm start` stack, its worker and its API separate processes, 1,000
 * active watchdogs, and a load generator process (bench/change-load.ts) changing their leaves through the API at 50
 * and at 100 changes per second, one change per watched subtree per round. Every tenth change is material (a leaf
 * → blocked: a new stop) and must wake the watchdog agent, a fresh set of watchdogs each round; the others are
 * bookkeeping (a title) and must wake nobody. One in ten rather than all: every wake starts an agent run, and this
 * measures how fast a watchdog notices, not the runs. Change-to-wake is the watchdog's `lastTriggeredAt` (written
 * with the wake) minus the change's start; it is reported beside the floor (bench/signal-floor.ts), measured on the
 * same dev server at the same rates, and as a multiple of the floor's p99. The counts per class of change come from
 * the in-process world (bench/change-classes.ts), where the statement counter sees treewarden's connections.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { CHANGES_CHANNEL } from '../changes/record';
import { eventually, type Harness } from '../testing/harness';
import { callApi, embeddedDatabaseUrl, startServiceStack, type ServiceStack } from '../testing/service-stack';
import { changeClasses } from './change-classes';
import type { ChangeLoad } from './change-load';
import { signalFloor, type FloorRound } from './signal-floor';
import { runBenchProcess } from './processes';
import { log, percentile, row, taggedPool, type ResultRow } from './support';
import { evaluatedSince, seedIdleWatchdogs, type SmallWatchedTree } from './worlds';

const WATCHDOGS = 1000;
const RATES = [50, 50, 100, 100];
/** change i of round r is material when i % MATERIAL_EVERY === r: a fresh set of watchdogs each round */
const MATERIAL_EVERY = 10;
/** the safety tick out of the way, as in the in-process event world: this measures changes */
const TICK_MS = 3_600_000;

export async function changeToWake(
  h: Harness,
  pool: pg.Pool,
  trees: SmallWatchedTree[],
  temporalAddress: string,
): Promise<ResultRow[]> {
  const rows = await changeClasses(h, pool, trees);
  // BENCH_CHANGE_CLASSES_ONLY=1: the per-class counts alone (a few minutes), while profiling a class's cost
  if (process.env.BENCH_CHANGE_CLASSES_ONLY === '1') return rows;
  log('  per-class counts done; the floor');
  const floor = await signalFloor(h.services.client, temporalAddress, RATES);
  log('  floor done; the service stack');
  const stack = await startServiceStack({
    temporalAddress,
    env: { TREEWARDEN_WATCHDOG_TICK_MS: String(TICK_MS), TREEWARDEN_STOP_GRACE_MS: '5000' },
  });
  const stackPool = taggedPool(embeddedDatabaseUrl(stack), 'bench');
  try {
    const world = await activeWatchdogs(stack, stackPool);
    const latencies: number[][] = [];
    for (const [round, rate] of RATES.entries()) latencies.push(await mixedRound(stack, stackPool, world, round, rate));
    return [...rows, ...latencyRows(floor, latencies)];
  } finally {
    await stackPool.end();
    await stack.stop();
  }
}

interface StackWorld {
  boardToken: string;
  trees: SmallWatchedTree[];
}

/** A company and a noop agent made through the API, 1,000 idle watchdogs seeded, their workflows started. */
async function activeWatchdogs(stack: ServiceStack, pool: pg.Pool): Promise<StackWorld> {
  const company = await callApi(stack.apiUrl, 'POST', '/api/companies', stack.adminToken, { name: 'Bench' });
  const boardToken: string = company.body.boardToken;
  const agent = await callApi(stack.apiUrl, 'POST', `/api/companies/${company.body.id}/agents`, boardToken, {
    name: 'bench agent',
    adapter: { type: 'noop' },
  });
  if (company.status !== 201 || agent.status !== 201)
    throw new Error(`scenario 2: company ${company.status}, agent ${JSON.stringify(agent.body)}`);
  const trees = await seedIdleWatchdogs(pool, company.body.id, agent.body.id, WATCHDOGS);
  // the worker recovered the (no) active watchdogs at its start; a recorded change of each root starts its workflow
  const since = new Date();
  await pool.query(
    `INSERT INTO "SubtreeChange" ("issueIds", reason) SELECT ARRAY[root], 'bench_start' FROM unnest($1::uuid[]) root`,
    [trees.map((t) => t.rootId)],
  );
  await pool.query(`SELECT pg_notify($1, '')`, [CHANGES_CHANNEL]);
  const ids = trees.map((t) => t.watchdogId);
  await eventually(
    'every stack watchdog to evaluate once',
    async () => (await evaluatedSince(pool, since, ids)) === ids.length,
    600_000,
  );
  await settled(pool);
  log(`  ${WATCHDOGS} watchdogs active in the service stack`);
  return { boardToken, trees };
}

/** One round of 1,000 changes at `rate`, every tenth waking; returns the waking changes' change-to-wake, ms. */
async function mixedRound(
  stack: ServiceStack,
  pool: pg.Pool,
  { boardToken, trees }: StackWorld,
  round: number,
  rate: number,
): Promise<number[]> {
  const material = (i: number) => i % MATERIAL_EVERY === round;
  const load: ChangeLoad = {
    apiUrl: stack.apiUrl,
    token: boardToken,
    rate,
    changes: trees.map((t, i) => ({
      issueId: t.leafId,
      patch: material(i) ? { status: 'blocked', blockedReason: 'the bench unblocks it' } : { title: `round ${round}` },
    })),
  };
  const { changedAt } = await runBenchProcess<{ changedAt: number[] }>('change-load.ts', load);
  const triggered = async () => {
    const { rows } = await pool.query<{ id: string; at: Date }>(
      `SELECT id, "lastTriggeredAt" AS at FROM "Watchdog" WHERE "lastTriggeredAt" >= $1`,
      [new Date(changedAt[0])],
    );
    return new Map(rows.map((r) => [r.id, r.at.getTime()]));
  };
  const expected = trees.filter((_, i) => material(i)).length;
  await eventually(
    'every materially changed watchdog to wake',
    async () => (await triggered()).size >= expected,
    600_000,
  );
  await settled(pool);
  const at = await triggered();
  const bookkeepingWoken = trees.filter((t, i) => !material(i) && at.has(t.watchdogId)).length;
  if (bookkeepingWoken > 0) throw new Error(`scenario 2: bookkeeping changes woke ${bookkeepingWoken} watchdogs`);
  log(`  round ${round} at ${rate}/s done`);
  return trees.flatMap((t, i) => (material(i) ? [at.get(t.watchdogId)! - changedAt[i]] : []));
}

/**
 * The stack's processes are not counted, so quiet is read from its database: no change left to deliver, no run
 * live, and a few seconds more for the evaluations the last of them caused.
 */
async function settled(pool: pg.Pool): Promise<void> {
  await eventually(
    'the service stack to settle',
    async () => {
      const { rows } = await pool.query<{ n: string }>(
        `SELECT (SELECT count(*) FROM "SubtreeChange")
           + (SELECT count(*) FROM "Run" WHERE status IN ('queued', 'running', 'scheduled_retry')) AS n`,
      );
      return Number(rows[0].n) === 0;
    },
    600_000,
  );
  await sleep(3000);
}

function latencyRows(floor: FloorRound[], latencies: number[][]): ResultRow[] {
  return [...new Set(RATES)].flatMap((rate) => {
    const rounds = RATES.flatMap((r, i) => (r === rate ? [i] : []));
    const of = (p: number) => rounds.map((i) => percentile(latencies[i], p));
    const ratio = rounds.map((i) => percentile(latencies[i], 99) / floor[i].p99);
    const s = `2 change→wake, separate processes, ${rate}/s`;
    return [
      row(
        s,
        'floor signal-to-handled p50',
        'ms',
        rounds.map((i) => floor[i].p50),
        undefined,
        '1,000 no-op entities',
      ),
      row(
        s,
        'floor signal-to-handled p99',
        'ms',
        rounds.map((i) => floor[i].p99),
        undefined,
        '1,000 no-op entities',
      ),
      row(s, 'change-to-wake p50', 'ms', of(50), undefined, 'includes the 500 ms debounce'),
      row(s, 'change-to-wake p99', 'ms', of(99), undefined, '100 waking changes per round'),
      row(
        s,
        'change-to-wake p99 ÷ floor p99',
        '×',
        ratio,
        rate === 50 ? { text: '≤ 3×', ok: (m) => m <= 3 } : undefined,
        'same rate, same dev server',
      ),
    ];
  });
}
