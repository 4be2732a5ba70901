/**
 * A workflow's spans without the OpenTelemetry SDK. Inside the workflow sandbox every workflow evaluates each module
 * it imports, and the SDK's tracer (sdk-trace-base, core, resources, semantic conventions) made a cached workflow
 * cost 2.11 MiB and 40.7 ms to create against 0.20 MiB and 14.6 ms without it (bench/workflow-footprint.ts). A span
 * here is a plain record that reaches the worker's span processor through the same exporter sink the SDK's
 * interceptors use (workers/tracing.ts), and a trace crosses each boundary in the same `_tracer-data` header,
 * a W3C `traceparent`, so clients, activities and workflows of either kind continue one another's traces.
 */
import type { SerializableSpan, OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import { ApplicationFailure, defaultPayloadConverter, getRandomStream, proxySinks } from '@temporalio/workflow';
import type { Headers } from '@temporalio/workflow';

/** the header the SDK's OpenTelemetry interceptors read and write, on every side */
export const TRACE_HEADER = '_tracer-data';

/** OpenTelemetry's SpanKind.INTERNAL and SpanStatusCode values, as the SDK's workflow spans set them */
const INTERNAL = 0;
const StatusCode = { Unset: 0, Ok: 1, Error: 2 } as const;
const SAMPLED = 1;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

export interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
}

/** The span context a caller put in `headers`, if it put a valid one there. */
export function contextFromHeaders(headers: Headers): SpanContext | undefined {
  const payload = headers[TRACE_HEADER];
  if (payload === undefined) return undefined;
  const carrier: unknown = defaultPayloadConverter.fromPayload(payload);
  if (typeof carrier !== 'object' || carrier === null) return undefined;
  const { traceparent, tracestate } = carrier as { traceparent?: unknown; tracestate?: unknown };
  const match = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent.trim()) : null;
  if (!match || match[1] === 'ff' || (match[1] === '00' && match[5] !== undefined)) return undefined;
  const [, , traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (traceId === INVALID_TRACE_ID || spanId === INVALID_SPAN_ID) return undefined;
  return {
    traceId,
    spanId,
    traceFlags: parseInt(flags, 16),
    ...(typeof tracestate === 'string' ? { traceState: tracestate } : {}),
  };
}

/** `headers` with `context` as their trace, for the activity, child or workflow they start or signal */
export function headersWithContext(headers: Headers, context: SpanContext | undefined): Headers {
  if (!context) return headers;
  const { traceId, spanId, traceFlags, traceState } = context;
  const carrier = {
    traceparent: `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`,
    ...(traceState !== undefined ? { tracestate: traceState } : {}),
  };
  return { ...headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload(carrier) };
}

const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/**
 * One span, started now in workflow time and exported once when it ends. Sampling follows the parent, as the SDK's
 * ParentBased(AlwaysOn) sampler does; an unsampled span still carries the trace on.
 */
export class WorkflowSpan {
  readonly context: SpanContext;
  private readonly startedAt = Date.now();
  private readonly attributes: Record<string, string> = {};
  private readonly events: SerializableSpan['events'][number][] = [];
  private status: SerializableSpan['status'] = { code: StatusCode.Unset };

  constructor(
    private readonly name: string,
    private readonly parent: SpanContext | undefined,
  ) {
    const ids = getRandomStream('treewarden/tracing');
    const hex = (bytes: number) =>
      Array.from(ids.fill(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
    this.context = {
      traceId: parent?.traceId ?? hex(16),
      spanId: hex(8),
      traceFlags: parent ? parent.traceFlags : SAMPLED,
      ...(parent?.traceState !== undefined ? { traceState: parent.traceState } : {}),
    };
  }

  setAttribute(key: string, value: string): void {
    this.attributes[key] = value;
  }

  succeeded(): void {
    this.status = { code: StatusCode.Ok };
  }

  /** as the SDK records a failure: a benign application failure leaves the status unset */
  failed(error: unknown): void {
    const benign = error instanceof ApplicationFailure && error.category === 'BENIGN';
    const message = error instanceof Error ? error.message : String(error);
    this.status = benign ? { code: StatusCode.Unset } : { code: StatusCode.Error, message };
    this.events.push({
      name: 'exception',
      time: hrTime(Date.now()),
      attributes: {
        'exception.type': error instanceof Error ? error.name : typeof error,
        'exception.message': message,
        ...(error instanceof Error && error.stack ? { 'exception.stacktrace': error.stack } : {}),
      },
    });
  }

  end(): void {
    if ((this.context.traceFlags & SAMPLED) === 0) return;
    const endedAt = Date.now();
    proxySinks<OpenTelemetrySinks>().exporter.export([
      {
        name: this.name,
        kind: INTERNAL,
        spanContext: this.context,
        ...(this.parent ? { parentSpanId: this.parent.spanId } : {}),
        startTime: hrTime(this.startedAt),
        endTime: hrTime(endedAt),
        duration: hrTime(endedAt - this.startedAt),
        status: this.status,
        attributes: this.attributes,
        links: [],
        events: this.events,
        ended: true,
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        droppedLinksCount: 0,
        instrumentationLibrary: { name: 'treewarden/workflows' },
      },
    ]);
  }
}
