/** API process: serves the HTTP surface until SIGTERM/SIGINT. */
import { parseConfig } from '../domain/config';
import { withSecretFiles } from '../runtime/secret-files';
import { loadTemporalTarget } from '../temporal/connection';
import { connectServices, createLogger, exitAfterGraceOnSignal } from '../runtime/services';
import { buildApi } from './server';
import { createDatabaseProbe } from '../db/health-probe';
import { dbTimeoutsOf } from '../db/prisma';
import { startTracing } from '../runtime/tracing';

async function main() {
  const env = withSecretFiles(process.env);
  const config = parseConfig(env);
  const log = createLogger(config, 'treewarden-api');
  // before the app exists: Fastify's instrumentation attaches to each app as it is created
  const tracing = startTracing('treewarden-api');
  const services = await connectServices(config, loadTemporalTarget(env), log);
  const probe = createDatabaseProbe(config.DATABASE_URL, dbTimeoutsOf(config));
  const app = buildApi(services, {
    pingDatabase: probe.ping,
    healthChecks: [async () => void (await services.connection.workflowService.getSystemInfo({}))],
  });
  await app.listen({ port: config.TREEWARDEN_API_PORT, host: config.TREEWARDEN_API_HOST });
  const stop = async () => {
    await app.close();
    await services.close();
    await probe.close();
    await tracing.shutdown();
    process.exit(0);
  };
  exitAfterGraceOnSignal(config.TREEWARDEN_SHUTDOWN_GRACE_MS, log);
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`treewarden api failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
