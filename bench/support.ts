/**
 * What every scenario shares: the stack (provisioned with the test suite's own functions), the
 * statement counter, history counting and statistics (worlds.ts seeds and changes the worlds).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Client as TemporalClient } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import pg from 'pg';
import '../testing/runtime'; // installs the Temporal Runtime with a WARN logger, as in the tests
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { startDevServer } from '../scripts/provision/temporal-dev-server';
import { teardownStack, type GlobalStackState } from '../testing/reap';
import { dbTrackFile, publishStack, stackFilePath, unpublishStack, type StackInfo } from '../testing/stack';
import { startHarness, type Harness } from '../testing/harness';

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

// ---------------------------------------------------------------------------------------------------------------
// stack

/**
 * A dev server on free ports and a migrated template database, published exactly as the test
 * suite's globalSetup does, so startHarness() clones a fresh database per scenario. Unlike the tests
 * the server keeps Temporal's production continue-as-new suggestion (4,096 events), stated explicitly
 * because scenario 4 checks runs against it. A crashed bench is reaped by the next test run
 * (the stack file names this pid) and its dev server dies with this process (startDevServer's watchdog).
 */
export async function provisionStack(): Promise<GlobalStackState> {
  const stackFile = stackFilePath();
  const state: GlobalStackState = { stackFile };
  try {
    state.server = await startDevServer({
      uiPort: null,
      searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES },
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 4096 },
      log,
    });
    const pgTools = await import('../scripts/provision/postgres');
    const postgres = await pgTools.resolveTestPostgresAdminUrl();
    state.stopPostgres = postgres.stop;
    const runId = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
    const info: StackInfo = {
      runId,
      jestPid: process.pid,
      temporalAddress: state.server.address,
      namespace: state.server.namespace,
      temporalPid: state.server.pid,
      dbTrackFile: dbTrackFile(stackFile),
      pgAdminUrl: postgres.adminUrl,
      templateDb: `tw_test_tpl_${runId}`,
    };
    state.info = info;
    publishStack(info, stackFile); // before the template exists, so a half-created one is still dropped
    await pgTools.createMigratedTemplate(postgres.adminUrl, info.templateDb!);
    return state;
  } catch (error) {
    await closeStack(state);
    throw error;
  }
}

export async function closeStack(state: GlobalStackState): Promise<void> {
  unpublishStack();
  await teardownStack(state, log);
}

/**
 * A harness (worker + API in this process, fresh database) with production timing: the tests'
 * 200 ms debounce is replaced by the 500 ms default. `env` overrides per scenario.
 */
export function benchHarness(env: Record<string, string> = {}): Promise<Harness> {
  return startHarness({ TREEWARDEN_WATCHDOG_DEBOUNCE_MS: '500', TREEWARDEN_STOP_GRACE_MS: '5000', ...env });
}

// ---------------------------------------------------------------------------------------------------------------
// statement counter

/** Who sent a statement: treewarden itself (the default), the bench's own seeding and checks, or the polling peer. */
export type StatementSource = 'treewarden' | 'bench' | 'peer';

const counted: Record<StatementSource, number> = { treewarden: 0, bench: 0, peer: 0 };
const sourceOfClient = new WeakMap<object, StatementSource>();
let installed = false;

/**
 * Counts every statement node-postgres sends, by wrapping Client.prototype.query: Prisma's pg adapter
 * runs every query, BEGIN and COMMIT through it (pool queries included), so nothing bypasses the count.
 * Connections of pools made by {@link taggedPool} are attributed to their tag, all others to treewarden.
 */
export function installStatementCounter(): void {
  if (installed) return;
  installed = true;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
    counted[sourceOfClient.get(this) ?? 'treewarden'] += 1;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
}

/** Who sent the statements of a node-postgres client (its pool's tag; treewarden when untagged). */
export const statementSourceOf = (client: object): StatementSource => sourceOfClient.get(client) ?? 'treewarden';

export function statementCount(source: StatementSource = 'treewarden'): number {
  return counted[source];
}

export function taggedPool(url: string, source: Exclude<StatementSource, 'treewarden'>, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('connect', (client) => sourceOfClient.set(client, source));
  // an idle connection dropped under it (a teardown on Ctrl-C drops the database WITH FORCE) must not crash the bench
  pool.on('error', (error) => log(`${source} pool: ${error.message}`));
  return pool;
}

/** The database URL a harness's Prisma client uses (the harness made a fresh clone for it). */
export const databaseUrlOf = (h: Harness) => h.services.config.DATABASE_URL;

/** Waits until treewarden has sent no statement for `quietMs`: the system reacted to everything it was told. */
export async function quiescence(quietMs = 2000, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = statementCount();
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() > deadline) throw new Error(`no quiescence within ${timeoutMs} ms`);
    await sleep(250);
    const now = statementCount();
    if (now !== last) {
      last = now;
      since = Date.now();
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Temporal history

export interface HistoryTally {
  events: number;
  workflowTasks: number;
  timersFired: number;
  activitiesScheduled: number;
  /** local activities: each leaves a marker in the history, not an activity task */
  markers: number;
  signals: number;
}

export const emptyTally = (): HistoryTally => ({
  events: 0,
  workflowTasks: 0,
  timersFired: 0,
  activitiesScheduled: 0,
  markers: 0,
  signals: 0,
});

/**
 * Tallies one workflow's history (latest run) into the given time windows [from, to).
 * Event kinds are told apart by their attribute fields, so no protobuf enum import is needed.
 */
export async function tallyHistory(
  client: TemporalClient,
  workflowId: string,
  windows: { from: number; to: number }[],
): Promise<HistoryTally[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const tallies = windows.map(emptyTally);
  for (const e of history.events ?? []) {
    const at = tsToMs(e.eventTime);
    const i = windows.findIndex((w) => at >= w.from && at < w.to);
    if (i < 0) continue;
    const t = tallies[i];
    t.events += 1;
    if (e.workflowTaskCompletedEventAttributes) t.workflowTasks += 1;
    if (e.timerFiredEventAttributes) t.timersFired += 1;
    if (e.activityTaskScheduledEventAttributes) t.activitiesScheduled += 1;
    if (e.markerRecordedEventAttributes) t.markers += 1;
    if (e.workflowExecutionSignaledEventAttributes) t.signals += 1;
  }
  return tallies;
}

export function addTallies(a: HistoryTally, b: HistoryTally): HistoryTally {
  return {
    events: a.events + b.events,
    workflowTasks: a.workflowTasks + b.workflowTasks,
    timersFired: a.timersFired + b.timersFired,
    activitiesScheduled: a.activitiesScheduled + b.activitiesScheduled,
    markers: a.markers + b.markers,
    signals: a.signals + b.signals,
  };
}

/** Every run (continue-as-new chain included) of a workflow id with its history length, from describe(). */
export async function runHistoryLengths(client: TemporalClient, workflowId: string): Promise<number[]> {
  const lengths: number[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const described = await client.workflow.getHandle(workflowId, execution.runId).describe();
    lengths.push(described.historyLength);
  }
  return lengths;
}

// ---------------------------------------------------------------------------------------------------------------
// statistics and results

export interface Figure {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: number[]): Figure {
  if (values.length === 0) throw new Error('no samples');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length };
}

/** Nearest-rank percentile. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface ResultRow {
  scenario: string;
  metric: string;
  unit: string;
  figure: Figure;
  /** e.g. '≤ 2×'; absent for figures reported without a target */
  target?: string;
  /** whether the median meets the target */
  met?: boolean;
  note?: string;
}

export function row(
  scenario: string,
  metric: string,
  unit: string,
  values: number[],
  target?: { text: string; ok: (median: number) => boolean },
  note?: string,
): ResultRow {
  const figure = summarize(values);
  return {
    scenario,
    metric,
    unit,
    figure,
    ...(target ? { target: target.text, met: target.ok(figure.median) } : {}),
    ...(note ? { note } : {}),
  };
}

export const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** Heap after a full collection: `--expose-gc` enabled at run time, since `npm run bench` passes no node flags. */
export function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function inParallel<T>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  });
  await Promise.all(workers);
}
