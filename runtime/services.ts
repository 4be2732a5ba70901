/** Wires config, database, Temporal client and orchestrator into the Deps every layer shares. */
import { Client, Connection } from '@temporalio/client';
import pino, { type Logger } from 'pino';
import { createPrisma, dbTimeoutsOf } from '../db/prisma';
import type { Config } from '../domain/config';
import { detectContainment } from '../runs/cgroups';
import type { Deps } from './deps';
import { resolveHostId } from '../runs/host-identity';
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
  if (!stream.isTTY) return pino({ name, level: config.LOG_LEVEL });
  return pino({
    name,
    level: config.LOG_LEVEL,
    transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
  });
}

export async function connectServices(config: Config, log: Logger): Promise<Services> {
  const db = createPrisma(config.DATABASE_URL, dbTimeoutsOf(config));
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const orchestrator = createTemporalOrchestrator(client, config);
  return {
    db,
    config,
    log,
    hostId: resolveHostId(config),
    containment: detectContainment(config.TREEWARDEN_CONTAINMENT),
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
