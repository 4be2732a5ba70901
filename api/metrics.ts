/**
 * The API process's `/metrics` (Prometheus text, no token, like `/healthz`): requests by route and status, their
 * latency, those in flight, and the process's own figures. Routes are their patterns (`/api/issues/:id`), never raw
 * URLs, so ids do not become label values.
 */
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const API_METRICS_PATH = '/metrics';

export function registerApiMetrics(app: FastifyInstance): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'treewarden_api_' });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'treewarden_api_requests_total',
    help: 'API requests answered, by route pattern and status',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'treewarden_api_request_duration_seconds',
    help: 'API request latency, from receipt to the answer sent',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: 'treewarden_api_requests_in_flight',
    help: 'API requests received and not yet answered',
    registers: [registry],
  });
  const started = new WeakMap<object, (labels: Partial<Record<(typeof labelNames)[number], string>>) => number>();

  app.addHook('onRequest', async (request) => {
    inFlight.inc();
    started.set(request, duration.startTimer());
  });
  app.addHook('onResponse', async (request, reply) => {
    inFlight.dec();
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    requests.inc(labels);
    started.get(request)?.(labels);
  });
  app.get(API_METRICS_PATH, { schema: { hide: true }, config: { public: true } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
