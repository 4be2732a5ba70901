/**
 * Worker process: polls the task queue until SIGTERM/SIGINT, then drains in-flight work.
 * Several of these may serve one task queue at once.
 */
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../domain/config';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { createMetrics } from '../services/metrics';
import { registerSearchAttributes } from '../scripts/provision/temporal';
import { createWorker, recoverWorkflows } from './create-worker';
import { startMetricsServer } from './metrics-server';
import { connectServices, createLogger, exitAfterGraceOnSignal } from './runtime';

async function main() {
  const config = parseConfig(process.env);
  const log = createLogger(config, 'treewarden-worker');
  // Temporal core logs go through pino too, so one stream explains everything
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
      const level = entry.level.toLowerCase() as Lowercase<LogLevel>;
      log[level === 'trace' ? 'trace' : level === 'warn' ? 'warn' : level === 'error' ? 'error' : level === 'debug' ? 'debug' : 'info']({ ...entry.meta, source: 'temporal' }, entry.message);
    }),
  });
  // the drain, then SIGTERM to in-flight commands and SIGKILL a stop grace later, then closing up
  exitAfterGraceOnSignal(config.TREEWARDEN_SHUTDOWN_GRACE_MS + config.TREEWARDEN_STOP_GRACE_MS + CLOSE_MARGIN_MS, log);
  const services = await connectServices(config, log);
  await registerSearchAttributes(services.connection, config.TEMPORAL_NAMESPACE, SEARCH_ATTRIBUTE_TYPES, (line) => log.info(line));
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const bundlePath = config.TREEWARDEN_WORKFLOW_BUNDLE ?? join(config.TREEWARDEN_DATA_DIR, 'workflow-bundle.js');
  const metrics = createMetrics();
  const worker = await createWorker(services, {
    connection,
    metrics,
    ...(existsSync(bundlePath) ? { workflowBundle: { code: readFileSync(bundlePath, 'utf8') } } : {}),
  });
  const metricsServer = await startMetricsServer({ host: config.TREEWARDEN_WORKER_METRICS_HOST, port: config.TREEWARDEN_WORKER_METRICS_PORT, metrics, worker });
  log.info({ healthz: `${metricsServer.url}/healthz`, metrics: `${metricsServer.url}/metrics` }, 'metrics server listening');
  const recovered = await recoverWorkflows(services);
  log.info({ taskQueue: config.TREEWARDEN_TASK_QUEUE, ...recovered }, 'worker started');
  await worker.run();
  await metricsServer.close();
  await connection.close();
  await services.close();
  log.info('worker stopped');
}

/** closing Temporal and database connections after the drain */
const CLOSE_MARGIN_MS = 5_000;

main().catch((error: unknown) => {
  process.stderr.write(`treewarden worker failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
