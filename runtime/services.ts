/** Wires config, database, Temporal client and orchestrator into the Deps every layer shares. */
import { Client, type Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import pino, { type Logger } from 'pino';
import { createPrisma, dbTimeoutsOf } from '../db/prisma';
import type { Config } from '../domain/config';
import { detectContainment } from '../processes/cgroups';
import { detectSandbox, pathsToHide } from '../processes/sandbox';
import { resolve } from 'node:path';
import type { Deps } from './deps';
import { resolveHostId } from '../processes/host-identity';
import { connectClient, describeTarget, type TemporalTarget } from '../temporal/connection';
import { createTemporalOrchestrator } from '../temporal/temporal-orchestrator';

export interface Services extends Deps {
  connection: Connection;
  client: Client;
  close(): Promise<void>;
}

/**
 * NDJSON for log collectors; readable lines (pino-pretty, in a worker thread) when a person watches a
 * terminal, e.g. under `npm start`.
 */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL'>,
  name: string,
  stream: { isTTY?: boolean } = process.stdout,
): Logger {
  // the SDK logs a failed activity's or workflow's error under `error`: serialised like `err`, with its message,
  // type and stack (a Prisma error's message is not enumerable, so the bare object printed only its client version)
  const serializers = { error: pino.stdSerializers.err };
  if (!stream.isTTY) return pino({ name, level: config.LOG_LEVEL, serializers });
  return pino({
    name,
    level: config.LOG_LEVEL,
    serializers,
    transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
  });
}

export async function connectServices(config: Config, temporal: TemporalTarget, log: Logger): Promise<Services> {
  const db = createPrisma(config.DATABASE_URL, dbTimeoutsOf(config), config.TREEWARDEN_DB_POOL_MAX);
  const connection = await connectClient(temporal);
  // a start, signal or update carries the caller's trace context to the workflow (runtime/tracing.ts)
  const client = new Client({
    connection,
    namespace: temporal.namespace,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
  log.info({ temporal: describeTarget(temporal) }, 'connected to Temporal');
  const orchestrator = createTemporalOrchestrator(client, config);
  return {
    db,
    config,
    temporal,
    log,
    hostId: resolveHostId(config),
    containment: detectContainment(config.TREEWARDEN_CONTAINMENT),
    sandbox: detectSandbox(config.TREEWARDEN_SANDBOX, pathsToHide(process.env, resolve(config.TREEWARDEN_DATA_DIR))),
    orchestrator,
    connection,
    client,
    async close() {
      await connection.close();
      await db.$disconnect();
    },
  };
}

/**
 * On SIGTERM/SIGINT, a process that has not exited by itself within `graceMs` exits anyway: a
 * stuck database call (or a drain waiting on one) must not keep a supervisor's stop waiting.
 */
export function exitAfterGraceOnSignal(graceMs: number, log: Logger): void {
  const arm = (signal: NodeJS.Signals) => {
    setTimeout(() => {
      log.error({ signal, graceMs }, 'still running at the end of the shutdown grace period; exiting');
      process.exit(1);
    }, graceMs).unref();
  };
  process.once('SIGTERM', arm);
  process.once('SIGINT', arm);
}
