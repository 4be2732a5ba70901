/**
 * Scenario 6: one worker holding 10,000 idle watchdog workflows: those earlier scenarios left
 * running (waiting for a change or a tick) plus as many new ones as make up 10,000. The worker runs
 * with the SDK's default cache size, as workers/main.ts does; the cache must stay at or under that
 * bound while the rest are evicted and replayed on demand, and the process's memory is reported after
 * a full GC once every workflow has evaluated and gone idle.
 */
import type pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, type Harness } from '../testing/harness';
import { collectGarbage, log, quiescence, row, type ResultRow } from './support';
import { evaluatedSince, seedIdleWatchdogs, startWatchdogWorkflows } from './worlds';

const WATCHDOGS = 10_000;
const CHUNK = 2_250;
const SAMPLES = 5;
const MiB = 1024 * 1024;

export async function workerMemory(
  h: Harness,
  pool: pg.Pool,
  companyId: string,
  agentId: string,
  alreadyRunning: number,
): Promise<ResultRow[]> {
  const worker = h.worker;
  if (!worker) throw new Error('scenario 6 needs the in-process worker');
  const cacheLimit = worker.options.maxCachedWorkflows;
  let cachedMax = 0;
  const watchCache = setInterval(() => (cachedMax = Math.max(cachedMax, worker.getStatus().numCachedWorkflows)), 200);
  try {
    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    const trees = await seedIdleWatchdogs(pool, companyId, agentId, WATCHDOGS - alreadyRunning);
    const startRates: number[] = [];
    for (let i = 0; i < trees.length; i += CHUNK) {
      const chunk = trees.slice(i, i + CHUNK);
      const since = new Date();
      await startWatchdogWorkflows(h, companyId, chunk, 32);
      await eventually(
        'a chunk of watchdogs to evaluate',
        async () =>
          (await evaluatedSince(
            pool,
            since,
            chunk.map((t) => t.watchdogId),
          )) === chunk.length,
        600_000,
      );
      startRates.push(chunk.length / ((Date.now() - since.getTime()) / 1000));
      log(`  ${i + chunk.length + alreadyRunning} watchdog workflows, ${worker.getStatus().numCachedWorkflows} cached`);
    }
    await quiescence();
    const heap: number[] = [];
    const rss: number[] = [];
    const cached: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      collectGarbage();
      const usage = process.memoryUsage();
      heap.push(usage.heapUsed / MiB);
      rss.push(usage.rss / MiB);
      cached.push(worker.getStatus().numCachedWorkflows);
      await sleep(1000);
    }
    const s = '6 worker memory, 10k idle watchdogs';
    return [
      row(s, 'process RSS (worker + API + bench)', 'MiB', rss),
      row(s, 'JS heap after GC', 'MiB', heap),
      row(
        s,
        'heap growth per 1,000 new watchdogs',
        'MiB',
        heap.map((mb) => (mb - heapBefore / MiB) / (trees.length / 1000)),
      ),
      row(
        s,
        'cached workflows',
        'workflows',
        cached,
        { text: `≤ ${cacheLimit} (SDK default)`, ok: () => cachedMax <= cacheLimit },
        `max seen ${cachedMax}`,
      ),
      row(s, `start + first evaluation, per chunk of ${CHUNK}`, 'watchdogs/s', startRates),
    ];
  } finally {
    clearInterval(watchCache);
  }
}
