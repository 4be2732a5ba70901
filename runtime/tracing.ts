/**
 * OpenTelemetry traces (issue 28): one trace from an API request through the client's start, signal or update to the
 * workflow and its activities. Spans are exported over OTLP/HTTP when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and nowhere when neither is; the exporter and the batch processor read
 * the other standard variables themselves (OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_SCHEDULE_DELAY, ...), and
 * OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the resource named here.
 */
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface Tracing {
  /** spans leave the process (an OTLP endpoint is configured) */
  readonly exporting: boolean;
  readonly resource: Resource;
  /** where spans end up, the workflows' too (they reach it through the SDK's exporter sink) */
  readonly spanProcessor: SpanProcessor;
  /** exports what is still buffered; on the way out */
  shutdown(): Promise<void>;
}

export type ServiceName = 'treewarden-api' | 'treewarden-worker' | 'treewarden-cli';

/** A process that exports nothing (tests, and every process without an OTLP endpoint). */
export const UNTRACED: Tracing = {
  exporting: false,
  resource: Resource.empty(),
  spanProcessor: new NoopSpanProcessor(),
  shutdown: async () => {},
};

export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** probes and scrapes, many a minute, are not worth a trace each */
const UNTRACED_ROUTES = new Set(['/healthz', '/metrics']);

/**
 * Registers the process's tracer provider (with AsyncLocalStorage context and W3C trace-context propagation) when an
 * endpoint is configured, and Fastify's own instrumentation for every Fastify app the process creates afterwards (a
 * request's span continues an incoming `traceparent`). Without an endpoint nothing is registered: the interceptors
 * then see OpenTelemetry's no-op tracer.
 */
export function startTracing(serviceName: ServiceName, env: NodeJS.ProcessEnv = process.env): Tracing {
  const resource = new Resource({ 'service.name': serviceName }).merge(envDetectorSync.detect());
  if (!tracingConfigured(env)) return { ...UNTRACED, resource };
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  new FastifyOtelInstrumentation({
    registerOnInitialization: true,
    ignorePaths: (route) => UNTRACED_ROUTES.has(route.url),
  });
  return { exporting: true, resource, spanProcessor, shutdown: () => provider.shutdown() };
}
