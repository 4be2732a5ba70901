/**
 * A worker's own connection: Temporal core's `NativeConnection`, which the pollers use, to the same target and with the
 * same settings as the client's (temporal/connection.ts). Apart from that file so the API and the CLI, which only need
 * the client, do not load the worker's native core.
 */
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { connectionFailure, describeTarget, type TemporalTarget } from './connection';

export async function connectWorker(target: TemporalTarget, log: Pick<Logger, 'info'>): Promise<NativeConnection> {
  const connection = await NativeConnection.connect(target.connection).catch((error: unknown) => {
    throw connectionFailure(target, error);
  });
  log.info({ temporal: describeTarget(target) }, 'worker connected to Temporal');
  return connection;
}
