/**
 * Worker process: polls the task queue until SIGTERM/SIGINT, then drains in-flight work.
 * Several of these may serve one task queue at once.
 */
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../domain/config';
import { withSecretFiles } from '../runtime/secret-files';
import { loadTemporalTarget } from '../temporal/connection';
import { connectWorker } from '../temporal/worker-connection';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { createMetrics } from './metrics';
import { registerSearchAttributes } from '../temporal/search-attributes';
import { createWorker, recoverWorkflowsOncePerFleet } from './create-worker';
import { startMetricsServer } from './metrics-server';
import { connectServices, createLogger, exitAfterGraceOnSignal } from '../runtime/services';
import { agentQueue, hostQueue } from '../domain/task-queue';
import { sweepHost } from './host-sweep';
import { registerPostmortemMetrics } from '../postmortem/postmortem-metrics';
import { coreMetricsAddress } from './core-metrics';
import { ensureRetentionSchedule } from '../retention/schedule';
import { ensureLivenessSchedule } from '../liveness/schedule';
import { startTracing } from '../runtime/tracing';

async function main() {
  const env = withSecretFiles(process.env);
  const config = parseConfig(env);
  const log = createLogger(config, 'treewarden-worker');
  const tracing = startTracing('treewarden-worker');
  // Temporal core logs go through pino too, so one stream explains everything
  const coreMetrics = await coreMetricsAddress();
  Runtime.install({
    telemetryOptions: { metrics: { prometheus: { bindAddress: coreMetrics } } },
    logger: new DefaultLogger('INFO', (entry) => {
      const level = entry.level.toLowerCase() as Lowercase<LogLevel>;
      log[
        level === 'trace'
          ? 'trace'
          : level === 'warn'
            ? 'warn'
            : level === 'error'
              ? 'error'
              : level === 'debug'
                ? 'debug'
                : 'info'
      ]({ ...entry.meta, source: 'temporal' }, entry.message);
    }),
  });
  // the drain, then SIGTERM to in-flight commands and SIGKILL a stop grace later, then closing up
  exitAfterGraceOnSignal(config.TREEWARDEN_SHUTDOWN_GRACE_MS + config.TREEWARDEN_STOP_GRACE_MS + CLOSE_MARGIN_MS, log);
  const temporal = loadTemporalTarget(env);
  const services = await connectServices(config, temporal, log);
  await registerSearchAttributes(services.connection, temporal.namespace, SEARCH_ATTRIBUTE_TYPES, (line) =>
    log.info(line),
  );
  const connection = await connectWorker(temporal, log);
  const bundlePath = config.TREEWARDEN_WORKFLOW_BUNDLE ?? join(config.TREEWARDEN_DATA_DIR, 'workflow-bundle.js');
  const metrics = createMetrics();
  registerPostmortemMetrics(metrics.registry, services.db, log);
  const worker = await createWorker(services, {
    connection,
    metrics,
    tracing,
    ...(existsSync(bundlePath) ? { workflowBundle: { code: readFileSync(bundlePath, 'utf8') } } : {}),
  });
  const metricsServer = await startMetricsServer({
    host: config.TREEWARDEN_WORKER_METRICS_HOST,
    port: config.TREEWARDEN_WORKER_METRICS_PORT,
    metrics,
    worker,
    containment: services.containment,
    sandbox: services.sandbox,
    coreMetrics,
  });
  log.info(
    { healthz: `${metricsServer.url}/healthz`, metrics: `${metricsServer.url}/metrics` },
    'metrics server listening',
  );
  if (services.sandbox.kind === 'none')
    log.warn(
      { sandbox: services.sandbox },
      services.sandbox.accepted
        ? "agents run unconfined: they can read this service's secrets and reach its ports (TREEWARDEN_SANDBOX=off)"
        : 'agents are refused: this host cannot sandbox them (docs/run-supervision.md, "What an agent can reach")',
    );
  const running = worker.run();
  const retentionSchedule = await ensureRetentionSchedule(services.client, config.TREEWARDEN_TASK_QUEUE);
  const livenessSchedule = await ensureLivenessSchedule(
    services.client,
    config.TREEWARDEN_TASK_QUEUE,
    config.TREEWARDEN_LIVENESS_SCAN_MS,
  );
  const recovered = (await recoverWorkflowsOncePerFleet(services)) ?? { recovery: 'done by another worker lately' };
  // polling already: a stop this host's queue holds is served while the sweep looks for orphans
  const swept = await sweepHost(services);
  const sweeping = setInterval(() => void sweepHost(services), config.TREEWARDEN_ORPHAN_SWEEP_MS);
  log.info(
    {
      taskQueue: config.TREEWARDEN_TASK_QUEUE,
      hostId: services.hostId,
      agentQueue: agentQueue(config.TREEWARDEN_TASK_QUEUE),
      hostQueue: hostQueue(config.TREEWARDEN_TASK_QUEUE, services.hostId),
      containment: services.containment,
      sandbox: services.sandbox,
      traces: tracing.exporting ? 'OTLP' : 'off',
      retentionSchedule,
      livenessSchedule,
      ...recovered,
      ...swept,
    },
    'worker started',
  );
  await running;
  clearInterval(sweeping);
  // each step of the close logged: a worker that outlives its grace says which one held it
  const closing = async (what: string, close: () => Promise<unknown>) => {
    log.info({ closing: what }, 'closing');
    await close();
  };
  await closing('metrics server', () => metricsServer.close());
  await closing('worker connection', () => connection.close());
  await closing('services', () => services.close());
  await closing('tracing', () => tracing.shutdown());
  log.info('worker stopped');
}

/** closing Temporal and database connections after the drain */
const CLOSE_MARGIN_MS = 5_000;

main().catch((error: unknown) => {
  process.stderr.write(`treewarden worker failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
