/** Builds a treewarden worker: every workflow type and every activity, on one task queue. */
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Deps } from '../services/deps';
import type { Metrics } from '../services/metrics';
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
 * Recovery on worker start: every active watchdog gets its workflow back (signal-with-start is a
 * no-op for running ones), and queued runs whose workflow never started are started.
 */
export async function recoverWorkflows(deps: Deps): Promise<{ watchdogs: number; runs: number }> {
  const watchdogs = await activeWatchdogs(deps);
  for (const w of watchdogs) {
    await deps.orchestrator.subtreeChanged({ watchdogId: w.id, companyId: w.companyId, issueId: w.issueId, title: w.issue.title }, 'worker_recovery');
  }
  const queued = await deps.db.run.findMany({ where: { status: 'queued' }, include: { issue: { select: { title: true } } } });
  for (const run of queued) {
    await deps.orchestrator.startRun({ runId: run.id, companyId: run.companyId, issueId: run.issueId, title: run.issue.title });
  }
  return { watchdogs: watchdogs.length, runs: queued.length };
}
