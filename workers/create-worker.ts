/**
 * Builds a treewarden worker: every workflow type and every activity on the shared task queue, the agents'
 * activities on the agents' queue, and the same activities on this host's queue, where the activities that read
 * or signal a run's processes are scheduled (domain/task-queue.ts).
 */
import { NativeConnection, Worker, type State, type WorkflowBundle } from '@temporalio/worker';
import { agentQueue, hostQueue } from '../domain/task-queue';
import { createActivities } from '../activities';
import type { Deps } from '../runtime/deps';
import { apiUrlOf } from '../domain/config';
import { startSandboxGate } from '../processes/sandbox-gate';
import { sandboxGateDir } from '../runs/run-files';
import type { Metrics } from './metrics';
import { forEachConcurrently } from '../domain/concurrency';
import { combinedState } from '../domain/worker-state';
import { activeWatchdogs } from '../watchdogs/configuration';
import { offerCompanyCapSlotsOf } from '../dispatch/company-cap';
import { startDeliveryDispatcher } from '../notifications/dispatcher';
import { startChangeDispatcher } from '../changes/dispatcher';
import { startHoldDispatcher } from '../holds/start-dispatcher';
import { pendingIssueMonitors, scheduleOf } from '../monitors/monitors';
import { metricsInterceptor } from './metrics-interceptor';
import { UNTRACED, type Tracing } from '../runtime/tracing';
import { activityTracing, workflowSpanSinks } from './tracing';
import { bundleWorkflows } from './workflow-code';
import { becomeCurrentIfNone, deploymentVersionOf, versionName, type DeploymentVersion } from '../temporal/deployment';

export interface WorkerOptions {
  connection: NativeConnection;
  /** a pre-built bundle (production, tests); without it the workflows are bundled at start */
  workflowBundle?: WorkflowBundle;
  /** counts this worker's activities and reports its workflow cache (served on /metrics) */
  metrics?: Metrics;
  /** where spans go (runtime/tracing.ts); without it they go nowhere */
  tracing?: Tracing;
}

/** The three pollers of one worker process, run and stopped as one. */
export interface TreewardenWorker {
  /** the shared task queue: every workflow and the short activities */
  shared: Worker;
  /** `<task queue>-agents`: the agents' own activities, with their own slots (domain/task-queue.ts) */
  agents: Worker;
  /** `<task queue>-host:<hostId>`: only this host's workers poll it */
  host: Worker;
  options: Worker['options'];
  /** RUNNING only while all three poll; otherwise the state of the poller furthest from stopped */
  getState(): State;
  getStatus(): ReturnType<Worker['getStatus']>;
  /** resolves when all have stopped; when one stops (or fails) the others are shut down too */
  run(): Promise<void>;
  shutdown(): void;
}

export async function createWorker(deps: Deps, options: WorkerOptions): Promise<TreewardenWorker> {
  const config = deps.config;
  // bundled here when not given, because the bundle's hash is the build id
  const workflowBundle = options.workflowBundle ?? (await bundleWorkflows());
  const version = deploymentVersionOf(config, workflowBundle.code);
  // every poller: the same connection, activities, tracing and metrics; in-flight activities (a run's process, a
  // release fan-out, a verified stop) get time to finish on SIGTERM
  const activity = [activityTracing, ...(options.metrics ? [metricsInterceptor(options.metrics)] : [])];
  const base = {
    connection: options.connection,
    namespace: deps.temporal.namespace,
    activities: createActivities(deps),
    interceptors: { activity },
    sinks: workflowSpanSinks(options.tracing ?? UNTRACED),
    shutdownGraceTime: config.TREEWARDEN_SHUTDOWN_GRACE_MS,
    // the agents' and host queues too: an activity of an execution pinned to a build runs on that build's workers
    ...(version ? { workerDeploymentOptions: versioned(version) } : {}),
  };
  const activityWorker = (taskQueue: string, maxConcurrentActivityTaskExecutions?: number) =>
    Worker.create({
      ...base,
      taskQueue,
      ...(maxConcurrentActivityTaskExecutions ? { maxConcurrentActivityTaskExecutions } : {}),
    });
  const maxCachedWorkflows = config.TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS;
  const shared = await Worker.create({
    ...base,
    taskQueue: config.TREEWARDEN_TASK_QUEUE,
    workflowBundle,
    // unset, the SDK's own default, sized to the heap (a cached watchdog measured 0.21 MiB, well inside its budget)
    ...(maxCachedWorkflows !== undefined ? { maxCachedWorkflows } : {}),
    maxConcurrentActivityTaskExecutions: config.TREEWARDEN_WORKER_MAX_ACTIVITIES,
    maxConcurrentWorkflowTaskExecutions: config.TREEWARDEN_WORKER_MAX_WORKFLOW_TASKS,
  });
  const agents = await activityWorker(
    agentQueue(config.TREEWARDEN_TASK_QUEUE),
    config.TREEWARDEN_WORKER_MAX_AGENT_RUNS,
  );
  const host = await activityWorker(hostQueue(config.TREEWARDEN_TASK_QUEUE, deps.hostId));
  const all = [shared, agents, host];
  // from creation, not from run(): whoever polls these pollers, the version they register may be the first
  if (version) void becomeCurrentOnFirstPoll(deps, options.connection, version);
  options.metrics?.observeWorkflowCache(() => shared.getStatus().numCachedWorkflows);
  const shutdown = () => {
    for (const worker of all) if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  return {
    shared,
    agents,
    host,
    options: shared.options,
    getState: () => combinedState(all.map((worker) => worker.getState())),
    getStatus: () => shared.getStatus(),
    async run() {
      // recorded notifications get their delivery workflows, recorded changes reach their watchdogs, and holds owed
      // their workflow get it, while this worker polls
      // the host's sandboxes reach the API and the outside network through it (processes/sandbox-gate.ts)
      const gate =
        deps.sandbox.kind === 'namespaces'
          ? await startSandboxGate(sandboxGateDir(config.TREEWARDEN_TASK_QUEUE), () => apiUrlOf(config))
          : null;
      const dispatchers = [
        startDeliveryDispatcher(deps, config.TREEWARDEN_WEBHOOK_DISPATCH_RETRY_MS),
        startChangeDispatcher(deps, config.TREEWARDEN_CHANGE_DISPATCH_RETRY_MS),
        startHoldDispatcher(deps, config.TREEWARDEN_HOLD_DISPATCH_RETRY_MS),
      ];
      try {
        await Promise.all(all.map((worker) => worker.run().finally(shutdown)));
      } finally {
        await Promise.all(dispatchers.map((d) => d.stop()));
        await gate?.close();
      }
    },
    shutdown,
  };
}

// every type declares its own behaviour (domain/versioning.ts); the SDK asks for a default all the same
const versioned = (version: DeploymentVersion) =>
  ({ version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' }) as const;

/** Never fails the worker: a deployment that stays without a current build is logged, for an operator to promote. */
async function becomeCurrentOnFirstPoll(deps: Deps, connection: NativeConnection, version: DeploymentVersion) {
  const log = deps.log.child({ deploymentVersion: versionName(version) });
  try {
    const outcome = await becomeCurrentIfNone(connection.workflowService, deps.temporal.namespace, version, {
      deadlineMs: BECOME_CURRENT_DEADLINE_MS,
      retryMs: 250,
    });
    log.info({ outcome }, `deployment version: ${outcome}`);
  } catch (error) {
    log.error({ err: error }, 'could not make this first build current; `treewarden rollout promote` can');
  }
}

// the server registers a version moments after its first poll; a minute covers a loaded server
const BECOME_CURRENT_DEADLINE_MS = 60_000;

/**
 * Recovery on worker start: every active watchdog gets its workflow back (a recovery ping starts a
 * missing one and leaves a running one as it is, so a fleet's rolling restart does not re-evaluate
 * every watched subtree), queued runs whose workflow never started are started, the companies with runs waiting
 * for their cap offer the slots they have free, and every pending issue monitor is scheduled again (a no-op where its
 * workflow waits; a set whose signal was lost gets its workflow).
 */
export async function recoverWorkflows(deps: Deps): Promise<{ watchdogs: number; runs: number; monitors: number }> {
  const watchdogs = await activeWatchdogs(deps);
  await forEachConcurrently(watchdogs, RECOVERY_CONCURRENCY, (w) =>
    deps.orchestrator.recoverWatchdog({
      watchdogId: w.id,
      companyId: w.companyId,
      issueId: w.issueId,
      title: w.issue.title,
    }),
  );
  const queued = await deps.db.run.findMany({
    where: { status: 'queued', companyCapQueuedAt: null },
    include: { issue: { select: { title: true } } },
  });
  await forEachConcurrently(queued, RECOVERY_CONCURRENCY, (run) =>
    deps.orchestrator.startRun({
      runId: run.id,
      companyId: run.companyId,
      issueId: run.issueId,
      title: run.issue.title,
    }),
  );
  // runs waiting for their company's cap start when offered a slot; an offer lost with its worker is made again
  const capped = await deps.db.run.findMany({
    where: { status: 'queued', companyCapQueuedAt: { not: null } },
    distinct: ['companyId'],
    select: { companyId: true },
  });
  await forEachConcurrently(capped, RECOVERY_CONCURRENCY, ({ companyId }) => offerCompanyCapSlotsOf(deps, companyId));
  const monitors = await pendingIssueMonitors(deps.db);
  await forEachConcurrently(monitors, RECOVERY_CONCURRENCY, (monitor) =>
    deps.orchestrator.scheduleIssueMonitor({
      issueId: monitor.issueId,
      companyId: monitor.companyId,
      title: monitor.issue.title,
      schedule: scheduleOf(monitor),
    }),
  );
  return { watchdogs: watchdogs.length, runs: queued.length, monitors: monitors.length };
}

// one round trip to Temporal each: 10,000 watchdogs one after another kept a worker from polling for a minute
const RECOVERY_CONCURRENCY = 16;

/**
 * The recovery above, by one starting worker per TREEWARDEN_FLEET_RECOVERY_EVERY_MS however many start (issue 25):
 * a rollout of N workers costs one pass over the watchdogs, not N. Between passes each watchdog's own safety tick and
 * the change outbox keep it going; what a worker recovers for its own host (adoptions, orphans) it does at every start.
 */
export async function recoverWorkflowsOncePerFleet(
  deps: Deps,
): Promise<Awaited<ReturnType<typeof recoverWorkflows>> | null> {
  const claimedBy = `${deps.hostId}/${process.pid}`;
  const leaseSeconds = deps.config.TREEWARDEN_FLEET_RECOVERY_EVERY_MS / 1000;
  const claimed = await deps.db.$queryRaw<{ chore: string }[]>`
    INSERT INTO "FleetChoreClaim" (chore, "claimedBy") VALUES ('workflow-recovery', ${claimedBy})
    ON CONFLICT (chore) DO UPDATE SET "claimedBy" = EXCLUDED."claimedBy", "claimedAt" = CURRENT_TIMESTAMP
      WHERE "FleetChoreClaim"."claimedAt" < CURRENT_TIMESTAMP - make_interval(secs => ${leaseSeconds}::float8)
    RETURNING chore`;
  return claimed.length === 1 ? recoverWorkflows(deps) : null;
}
