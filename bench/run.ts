/**
 * `npm run bench`: provisions a stack the way the tests do (own dev server on free ports, fresh
 * databases cloned from a migrated template), runs the scenarios of issues 7 and 12, prints one table
 * and writes it as JSON to .bench/. Everything started here is torn down, on failure and Ctrl-C too.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import type { GlobalStackState } from '../testing/reap';
import { eventually, seedCompany, type Harness } from '../testing/harness';
import { acpStop } from './acp-stop';
import { apiLoad } from './api-load';
import { burst } from './burst';
import { changeToWake } from './change-to-wake';
import { evaluationCost } from './evaluation-cost';
import { fairness } from './fairness';
import { IDLE_TICK_MS, idleCost } from './idle-cost';
import { peerPolling } from './peer-polling';
import { releaseFanout } from './release-fanout';
import {
  benchHarness,
  closeStack,
  databaseUrlOf,
  installStatementCounter,
  log,
  provisionStack,
  quiescence,
  taggedPool,
  type ResultRow,
} from './support';
import { evaluatedSince, seedIdleWatchdogs, startWatchdogWorkflows, type SmallWatchedTree } from './worlds';
import { workerMemory } from './worker-memory';

const REPO_ROOT = path.resolve(__dirname, '..');
const WATCHDOGS = 1000;
const EVENT_WORLD_TICK_MS = 3_600_000;

interface World {
  h: Harness;
  /** the bench's own connections: seeding and checks, never counted as treewarden's statements */
  pool: pg.Pool;
  companyId: string;
  /** a `noop` agent: runs it is woken for finish at once, so the bench measures treewarden, not an agent */
  agentId: string;
}

/** A harness with its own fresh database, a company and an agent; closed whatever `fn` does. */
async function withWorld<T>(env: Record<string, string>, fn: (world: World) => Promise<T>): Promise<T> {
  const h = await benchHarness(env);
  const pool = taggedPool(databaseUrlOf(h), 'bench');
  try {
    const company = await seedCompany(h, 'Bench');
    const agent = await company.agent();
    return await fn({ h, pool, companyId: company.companyId, agentId: agent.id });
  } finally {
    await pool.end();
    await h.close();
  }
}

/**
 * 1,000 idle watchdogs with their workflows started and each evaluated once; with `settle`, also
 * until the system is quiet again (not with a compressed tick: the first ticks would keep it busy).
 */
async function idleWatchdogs({ h, pool, companyId, agentId }: World, settle: boolean): Promise<SmallWatchedTree[]> {
  const trees = await seedIdleWatchdogs(pool, companyId, agentId, WATCHDOGS);
  const since = new Date();
  await startWatchdogWorkflows(h, companyId, trees);
  const ids = trees.map((t) => t.watchdogId);
  log(`  ${trees.length} watchdog workflows started; waiting for their first evaluations`);
  await eventually(
    'every watchdog to evaluate once',
    async () => (await evaluatedSince(pool, since, ids)) === trees.length,
    600_000,
  );
  if (settle) await quiescence();
  return trees;
}

function machine() {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  return {
    cores: os.cpus().length,
    cpu: /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
}

const format = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));

function table(rows: ResultRow[]): string {
  const lines = [
    '| scenario | metric | median | min | max | n | unit | target | met |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- |',
  ];
  for (const r of rows) {
    const met = r.met === undefined ? '' : r.met ? 'yes' : '**no**';
    const metric = r.note ? `${r.metric} (${r.note})` : r.metric;
    lines.push(
      `| ${r.scenario} | ${metric} | ${format(r.figure.median)} | ${format(r.figure.min)} | ${format(r.figure.max)} ` +
        `| ${r.figure.n} | ${r.unit} | ${r.target ?? ''} | ${met} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const elapsed = () => `${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s`;
  installStatementCounter();
  const stack: GlobalStackState = await provisionStack();
  const stop = (signal: NodeJS.Signals) => {
    log(`${signal}: tearing the stack down`);
    void closeStack(stack).finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const results: ResultRow[] = [];
  /** keeps a scenario's rows and shows them at once, so a long run reports as it goes */
  const record = (rows: ResultRow[]) => {
    results.push(...rows);
    for (const r of rows)
      log(
        `  ${r.scenario} | ${r.metric}: ${format(r.figure.median)} ${r.unit} ` +
          `(${format(r.figure.min)}–${format(r.figure.max)})`,
      );
  };
  // BENCH_SCENARIOS=1,5 runs a subset while profiling one cost; the report and BENCHMARKS.md come from full runs
  const selected = new Set((process.env.BENCH_SCENARIOS ?? '1,2,3,4,5,6,7,8,9,10').split(',').map((s) => s.trim()));
  const wanted = (n: number) => selected.has(String(n));
  const failures: { scenario: number; error: string }[] = [];
  /**
   * Runs scenario `n` when selected. A scenario that fails is reported and the others still run: one crash (a
   * worker out of memory) must not cost a full run's other figures.
   */
  const scenario = async (n: number, run: () => Promise<ResultRow[]>) => {
    if (!wanted(n)) return;
    log(`scenario ${n} (${elapsed()})`);
    try {
      record(await run());
    } catch (error) {
      log(`scenario ${n} FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      failures.push({ scenario: n, error: error instanceof Error ? error.message : String(error) });
    }
  };
  try {
    log(`stack up (${elapsed()}); scenario 3 first: its per-tick cost feeds scenario 7`);
    const idle =
      wanted(3) || wanted(7)
        ? await withWorld({ TREEWARDEN_WATCHDOG_TICK_MS: String(IDLE_TICK_MS) }, async (world) =>
            idleCost(world.h, world.pool, await idleWatchdogs(world, false)),
          )
        : undefined;
    if (idle && wanted(3)) record(idle.rows);
    // The event-driven scenarios run with the safety tick out of their way (an hour, longer than the
    // bench): scenario 3 measures the tick on its own, and scenario 7 adds it at its production rate.
    await withWorld({ TREEWARDEN_WATCHDOG_TICK_MS: String(EVENT_WORLD_TICK_MS) }, async (world) => {
      const { h, pool, companyId, agentId } = world;
      const trees = wanted(7) || wanted(2) || wanted(6) ? await idleWatchdogs(world, true) : [];
      await scenario(7, () => peerPolling(h, pool, trees, idle!.statementsPerTick));
      await scenario(2, () => changeToWake(h, pool, trees, stack.server!.address));
      await scenario(1, () => evaluationCost(h, pool));
      await scenario(4, () => burst(h, pool, companyId, agentId));
      await scenario(5, () => releaseFanout(h, pool, companyId, agentId));
      // + the burst root's watchdog, when scenario 4 ran (scenario 1 starts no workflow)
      await scenario(6, () => workerMemory(h, pool, companyId, agentId, trees.length + (wanted(4) ? 1 : 0)));
    });
    await scenario(9, () => fairness(stack.server!.address, stack.server!.namespace));
    if (wanted(10)) await withWorld({}, (world) => scenario(10, () => acpStop(world.h)));
    await scenario(8, () =>
      apiLoad({ address: stack.server!.address, pid: stack.server!.pid }, stack.info!.pgAdminUrl!),
    );
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await closeStack(stack);
  }
  results.sort((a, b) => parseInt(a.scenario, 10) - parseInt(b.scenario, 10));
  const durationSeconds = Math.round((Date.now() - startedAt.getTime()) / 1000);
  const report = {
    startedAt: startedAt.toISOString(),
    durationSeconds,
    machine: machine(),
    command: 'npm run bench',
    results,
    failures,
  };
  const dir = path.join(REPO_ROOT, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `results-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  fs.copyFileSync(file, path.join(dir, 'latest.json'));
  process.stdout.write(
    `\n${table(results)}\n\n${durationSeconds} s on ${report.machine.cores} × ${report.machine.cpu}; ` +
      `JSON: ${path.relative(REPO_ROOT, file)}\n`,
  );
  if (failures.length > 0) throw new Error(`scenarios failed: ${failures.map((f) => f.scenario).join(', ')}`);
}

main().then(
  // the Temporal native runtime keeps handles open after everything is closed
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
