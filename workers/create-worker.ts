/** Builds a treewarden worker: every workflow type and every activity, on one task queue. */
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Deps } from '../services/deps';
import type { Metrics } from '../services/metrics';
import { forEachConcurrently } from '../services/concurrency';
import { activeWatchdogs } from '../services/watchdogs';
import { metricsInterceptor } from './metrics-interceptor';

export interface WorkerOptions {
  connection: NativeConnection;
  /** a pre-built bundle (production, tests); without it the workflows are bundled at start */
  workflowBundle?: WorkflowBundle;
  maxCachedWorkflows?: number;
  /** counts this worker's activities and reports its workflow cache (served on /metrics) */
  metrics?: Metrics;
}

export async function createWorker(deps: Deps, options: WorkerOptions): Promise<Worker> {
  const worker = await Worker.create({
    connection: options.connection,
    namespace: deps.config.TEMPORAL_NAMESPACE,
    taskQueue: deps.config.TREEWARDEN_TASK_QUEUE,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities(deps),
    ...(options.metrics ? { interceptors: { activity: [metricsInterceptor(options.metrics)] } } : {}),
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    // in-flight activities (a run's process, a release fan-out) get time to finish on SIGTERM
    shutdownGraceTime: deps.config.TREEWARDEN_SHUTDOWN_GRACE_MS,
  });
  options.metrics?.observeWorkflowCache(() => worker.getStatus().numCachedWorkflows);
  return worker;
}

/**
 * Recovery on worker start: every active watchdog gets its workflow back (a recovery ping starts a
 * missing one and leaves a running one as it is, so a fleet's rolling restart does not re-evaluate
 * every watched subtree), and queued runs whose workflow never started are started.
 */
export async function recoverWorkflows(deps: Deps): Promise<{ watchdogs: number; runs: number }> {
  const watchdogs = await activeWatchdogs(deps);
  await forEachConcurrently(watchdogs, RECOVERY_CONCURRENCY, (w) =>
    deps.orchestrator.recoverWatchdog({ watchdogId: w.id, companyId: w.companyId, issueId: w.issueId, title: w.issue.title }),
  );
  const queued = await deps.db.run.findMany({ where: { status: 'queued' }, include: { issue: { select: { title: true } } } });
  await forEachConcurrently(queued, RECOVERY_CONCURRENCY, (run) =>
    deps.orchestrator.startRun({ runId: run.id, companyId: run.companyId, issueId: run.issueId, title: run.issue.title }),
  );
  return { watchdogs: watchdogs.length, runs: queued.length };
}

// one round trip to Temporal each: 10,000 watchdogs one after another kept a worker from polling for a minute
const RECOVERY_CONCURRENCY = 16;
