/** The OpenAPI document without a running service: routes declare their schemas when registered, not when called. */
import pino from 'pino';
import type { Deps } from '../runtime/deps';
import { buildApi } from './server';

export async function documentOf(): Promise<unknown> {
  // only the route declarations are read: no handler runs, so nothing but a logger (and the namespace the console's
  // links name) is needed
  const deps = { log: pino({ level: 'silent' }), temporal: { namespace: 'default' } };
  const app = buildApi(deps as unknown as Deps);
  await app.ready();
  const document = app.swagger();
  await app.close();
  return document;
}
