/** The HTTP surface for the main app (fastify). Every route but /healthz and /metrics needs a bearer token. */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { z, ZodError } from 'zod';
import { pingDatabase } from '../db/prisma';
import type { Actor } from '../domain/actor';
import { AppError, httpStatusOf, type ErrorCode } from '../domain/errors';
import { isHoldNotActive } from '../domain/hold-contract';
import type { Deps } from '../runtime/deps';
import { WakeDispatchError } from '../dispatch/wakes';
import { authenticate } from './auth';
import { registerApiMetrics } from './metrics';
import { consolePlugin } from './console/routes';
import { isPublicRoute, registerOpenApi, ResponseShapeError } from './openapi';
import { registerCoreRoutes } from './routes/core';
import { registerExecutionBlockerRoutes } from './routes/execution-blockers';
import { registerHoldRoutes } from './routes/holds';
import { registerHostRoutes } from './routes/hosts';
import { registerSupervisionRoutes } from './routes/supervision';
import { registerAcpRoutes } from './routes/acp';
import { registerViewRoutes } from './routes/views';
import { registerWatchdogRoutes } from './routes/watchdogs';
import { registerMonitorRoutes } from './routes/monitors';
import { registerWebhookRoutes } from './routes/webhooks';
import { registerPostmortemRoutes } from './routes/postmortem';

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor;
  }
  interface FastifyContextConfig {
    /** served without a bearer token (the OpenAPI document, its page, the console's own session check) */
    public?: boolean;
    /** a run token's call here is no sign of life for the silent-run watchdog (an ACP supervisor's poll) */
    signOfLife?: false;
  }
}

const HEALTHZ = '/healthz';
const HEALTH_ANSWERS = {
  200: z.object({ status: z.literal('ok') }),
  503: z.object({ status: z.literal('unavailable'), error: z.string() }),
};

export interface ApiOptions {
  /** how /healthz asks the database; by default a query through the service's pool (db/health-probe.ts has its own) */
  pingDatabase?: () => Promise<void>;
  /** checks for /healthz beyond the database, e.g. Temporal reachability */
  healthChecks?: (() => Promise<void>)[];
}

export function buildApi(deps: Deps, options: ApiOptions = {}): FastifyInstance {
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.log.child({ component: 'api' }) as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    // `/healthz/` is /healthz (probes and proxies add the slash)
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.decorateRequest('actor', null as never);
  registerApiMetrics(app);

  app.addHook('onRequest', async (request: FastifyRequest) => {
    // the matched route, not the raw URL: `/healthz?x=1` and `/healthz/` are the health check too
    if (request.routeOptions.url === HEALTHZ || isPublicRoute(request)) return;
    request.actor = await authenticate(deps, request);
  });

  app.setErrorHandler((error, request, reply) => {
    const send = (code: ErrorCode, message: string, details?: unknown) =>
      reply
        .status(httpStatusOf(code))
        .send({ error: { code, message, ...(details === undefined ? {} : { details }) } });
    if (error instanceof AppError) return send(error.code, error.message, error.details);
    if (error instanceof ZodError) {
      return send(
        'bad_request',
        error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
        error.issues,
      );
    }
    if (error instanceof ResponseShapeError) {
      request.log.error({ err: error }, 'response does not match its schema');
      const write = request.method === 'GET' ? 'nothing was changed' : 'the change may have been applied: read it back';
      return send('unavailable', `${error.message}; ${write}`);
    }
    if (isHoldNotActive(error)) return send('conflict', error.message);
    if (error instanceof WakeDispatchError)
      return send('unavailable', `${error.message}; the wake stays queued, retry later`);
    const fastifyError = error as { statusCode?: number; code?: string; message: string };
    if (fastifyError.statusCode === 413) return send('payload_too_large', 'request body is too large (limit 1 MiB)');
    if (fastifyError.statusCode === 415)
      return send('bad_request', 'request body must be JSON (content-type: application/json)');
    if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500)
      return send('bad_request', fastifyError.message);
    request.log.error({ err: error }, 'unhandled error');
    // a write can fail after its commit (or its commit's answer can be lost): never claim it did nothing
    if (request.method === 'GET' || request.method === 'HEAD')
      return send('unavailable', 'internal error; nothing was changed');
    return send(
      'unavailable',
      'internal error; the change may have been applied: read it back before retrying, ' +
        'or retry with the same Idempotency-Key',
    );
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: { code: 'not_found', message: `no route ${request.method} ${request.url}` } }),
  );

  registerOpenApi(app);
  // in a plugin, so the OpenAPI document (registered above) sees every route
  void app.register(async (api) => {
    api.get(
      HEALTHZ,
      {
        schema: {
          summary: 'Health: the database (and Temporal) answer within 1.5 s',
          security: [],
          response: HEALTH_ANSWERS,
        },
      },
      async (_request, reply) => {
        try {
          const ping = options.pingDatabase ?? (() => pingDatabase(deps.db));
          await withinDeadline(HEALTH_DEADLINE_MS, async () => {
            await Promise.all([ping(), ...(options.healthChecks ?? []).map((check) => check())]);
          });
          return { status: 'ok' };
        } catch (error) {
          return reply
            .status(503)
            .send({ status: 'unavailable', error: error instanceof Error ? error.message : String(error) });
        }
      },
    );
    registerCoreRoutes(api, deps);
    registerWatchdogRoutes(api, deps);
    registerMonitorRoutes(api, deps);
    registerHoldRoutes(api, deps);
    registerSupervisionRoutes(api, deps);
    registerAcpRoutes(api, deps);
    registerExecutionBlockerRoutes(api, deps);
    registerHostRoutes(api, deps);
    registerViewRoutes(api, deps);
    registerWebhookRoutes(api, deps);
    registerPostmortemRoutes(api, deps);
  });
  void app.register(consolePlugin(app, deps));
  return app;
}

/** A probe wants an answer within 2 s; a database that does not answer is unhealthy, not slow. */
const HEALTH_DEADLINE_MS = 1_500;

export class DeadlineExceededError extends Error {
  override readonly name = 'DeadlineExceededError';
}

async function withinDeadline(ms: number, work: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
