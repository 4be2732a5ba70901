/**
 * What one cached workflow costs a worker: memory and the CPU of creating it, for the workflow bundle workers run
 * (workers/workflow-code.ts, with the OpenTelemetry workflow interceptors) and for the same workflows without them.
 * `npx tsx bench/workflow-footprint.ts [count]` starts its own dev server, caches `count` (default 1,000) idle
 * watchdog workflows per bundle on a worker of its own and prints one JSON line per bundle. The watchdog's
 * activities answer at once from memory: the figure is the workflow's, not the database's. It sizes the default of
 * TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS (domain/workflow-cache.ts).
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EvaluationSummary } from '../domain/watchdog';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { startDevServer } from '../scripts/provision/temporal-dev-server';
import { bundleWorkflows } from '../workers/workflow-code';
import { inParallel, log } from './support';

const MiB = 2 ** 20;
const SETTLE_MS = 5_000;

/** what an evaluation of a live one-issue subtree returns */
const live = (watchdogId: string): EvaluationSummary => ({
  watchdogId,
  state: 'live',
  fingerprint: 'live',
  lastReviewedFingerprint: null,
  includedCount: 1,
  stoppedLeafCount: 0,
  liveIssueIds: [watchdogId],
  incompleteIssueIds: [],
  woke: false,
  reviewIssueId: null,
  evaluatedAt: new Date().toISOString(),
});

async function cacheWatchdogs(address: string, bundle: WorkflowBundle, count: number, name: string, slug: string) {
  const taskQueue = `footprint-${slug}`;
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: bundle,
    maxCachedWorkflows: count + 10,
    activities: {
      evaluateWatchdog: async (watchdogId: string) => live(watchdogId),
      watchdogChangedSinceEvaluation: async () => false,
      isWatchdogActive: async () => true,
    },
  });
  const running = worker.run();
  const client = new Client({ connection: await Connection.connect({ address }) });
  const rssBefore = process.memoryUsage().rss;
  const startedAt = Date.now();
  await inParallel(
    Array.from({ length: count }, (_, i) => i),
    32,
    (i) =>
      client.workflow.start('taskWatchdogWorkflow', {
        taskQueue,
        workflowId: `task-watchdog:${slug}-${i}`,
        args: [{ watchdogId: `${slug}-${i}`, issueId: `${slug}-${i}`, tickMs: 3_600_000, debounceMs: 200 }],
      }),
  );
  while (worker.getStatus().numCachedWorkflows < count) await sleep(200);
  const msPerWorkflow = (Date.now() - startedAt) / count;
  await sleep(SETTLE_MS);
  const rssPerWorkflow = (process.memoryUsage().rss - rssBefore) / count;
  worker.shutdown();
  await running;
  await connection.close();
  return { bundle: name, cached: count, rssMiBPerWorkflow: rssPerWorkflow / MiB, startMsPerWorkflow: msPerWorkflow };
}

async function main() {
  const count = Number(process.argv[2] ?? 1_000);
  const server = await startDevServer({ uiPort: null, searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES }, log });
  try {
    const bare = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows') });
    const bundles = [
      { name: "workers' (OpenTelemetry workflow interceptors)", slug: 'otel', bundle: await bundleWorkflows() },
      { name: 'without interceptors', slug: 'bare', bundle: bare },
    ];
    for (const { name, slug, bundle } of bundles) {
      const figures = await cacheWatchdogs(server.address, bundle, count, name, slug);
      process.stdout.write(`${JSON.stringify(figures)}\n`);
    }
  } finally {
    await server.stop();
  }
}

main().then(
  // the Temporal native runtime keeps handles open after everything is closed
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
