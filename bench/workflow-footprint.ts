/**
 * What one cached workflow costs a worker: memory and the CPU of creating it, for the workflow bundle workers run
 * (workers/workflow-code.ts, with workflows/tracing's interceptors), with the SDK's OpenTelemetry workflow
 * interceptors instead (what workers ran before) and without interceptors.
 * `npx tsx bench/workflow-footprint.ts [count]` starts its own dev server, then measures each bundle in a fresh
 * process of its own (so one bundle's heap growth is not charged to the next): it caches `count` (default 1,000)
 * idle watchdog workflows on a worker and prints one JSON line. The watchdog's activities answer at once from
 * memory: the figure is the workflow's, not the database's. It checks the SDK's default
 * cache size (about 1.7 MiB of heap per cached workflow), which TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS overrides.
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { EvaluationSummary } from '../domain/watchdog';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { startDevServer } from '../scripts/provision/temporal-dev-server';
import { UNTRACED } from '../runtime/tracing';
import { workflowSpanSinks } from '../workers/tracing';
import { bundleWorkflows } from '../workers/workflow-code';
import { inParallel, log } from './support';

const MiB = 2 ** 20;
const SETTLE_MS = 5_000;
const ADDRESS_VARIABLE = 'FOOTPRINT_TEMPORAL_ADDRESS';
const WORKFLOWS_PATH = require.resolve('../workflows');

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
    sinks: workflowSpanSinks(UNTRACED),
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

const BUNDLES: Record<string, { name: string; bundle: () => Promise<WorkflowBundle> }> = {
  traced: { name: "workers' (workflows/tracing interceptors)", bundle: () => bundleWorkflows() },
  otel: {
    name: "the SDK's OpenTelemetry workflow interceptors",
    bundle: () =>
      bundleWorkflowCode({
        workflowsPath: WORKFLOWS_PATH,
        workflowInterceptorModules: [
          require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
        ],
      }),
  },
  bare: {
    name: 'without interceptors',
    bundle: () => bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH }),
  },
};

/** in a child: measure the one bundle named by argv[3] against the parent's dev server */
async function measureOne(count: number, slug: string) {
  const { name, bundle } = BUNDLES[slug]!;
  const built = await bundle();
  const figures = await cacheWatchdogs(process.env[ADDRESS_VARIABLE]!, built, count, name, slug);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

async function main() {
  const count = Number(process.argv[2] ?? 1_000);
  const slug = process.argv[3];
  if (slug) return measureOne(count, slug);
  const server = await startDevServer({ uiPort: null, searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES }, log });
  try {
    for (const each of Object.keys(BUNDLES)) {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [...process.execArgv, __filename, `${count}`, each],
        {
          env: { ...process.env, [ADDRESS_VARIABLE]: server.address },
          maxBuffer: 16 * MiB,
        },
      );
      process.stdout.write(stdout);
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
