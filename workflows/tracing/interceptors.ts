/**
 * The workflow interceptors every worker bundles (workers/workflow-code.ts): the spans the SDK's OpenTelemetry
 * workflow interceptors make, under the same names, made by workflows/tracing/span.ts instead of the OpenTelemetry
 * SDK. Each call opens its span synchronously and calls on at once, so the commands a workflow issues, and their
 * order, are what they were under the SDK's interceptors (the recorded histories replay unchanged). Queries are not
 * traced: a read that changes nothing should not advance the workflow's span ids either.
 */
import {
  ContinueAsNew,
  workflowInfo,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
  type Headers,
} from '@temporalio/workflow';
import { contextFromHeaders, headersWithContext, WorkflowSpan, type SpanContext } from './span';

const isContinueAsNew = (error: unknown) => error instanceof ContinueAsNew;

/**
 * One workflow's active span, without AsyncLocalStorage: running a workflow inside the sandbox's AsyncLocalStorage
 * made a cached workflow cost 0.6 MiB more (bench/workflow-footprint.ts). A call's span is active while the call
 * runs synchronously; after its first `await`, calls fall back to the workflow's own span. Workflows here schedule
 * their work from the main loop (handlers change state and return), so that is the span they run in anyway.
 */
class WorkflowTracer {
  private workflowSpan: SpanContext | undefined;
  private synchronous: SpanContext | undefined;

  current(): SpanContext | undefined {
    return this.synchronous ?? this.workflowSpan;
  }

  /** `fn` in a new span, a child of `parent` or else of the active span; its outcome is the span's status */
  async inSpan<T>(
    name: string,
    parent: SpanContext | undefined,
    fn: (span: WorkflowSpan) => Promise<T>,
    acceptable?: (error: unknown) => boolean,
  ): Promise<T> {
    const span = new WorkflowSpan(name, parent ?? this.current());
    try {
      const result = await this.activeWhileSynchronous(span, fn);
      span.succeeded();
      return result;
    } catch (error) {
      if (acceptable?.(error)) span.succeeded();
      else span.failed(error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** the workflow's run: its span is the one every later call falls back to */
  runWorkflow<T>(name: string, parent: SpanContext | undefined, fn: () => Promise<T>): Promise<T> {
    return this.inSpan(
      name,
      parent,
      (span) => {
        this.workflowSpan = span.context;
        return fn();
      },
      isContinueAsNew,
    );
  }

  inSpanSync<T>(name: string, parent: SpanContext | undefined, fn: (span: WorkflowSpan) => T): T {
    const span = new WorkflowSpan(name, parent ?? this.current());
    try {
      const result = this.activeWhileSynchronous(span, fn);
      span.succeeded();
      return result;
    } catch (error) {
      span.failed(error);
      throw error;
    } finally {
      span.end();
    }
  }

  private activeWhileSynchronous<T>(span: WorkflowSpan, fn: (span: WorkflowSpan) => T): T {
    const outer = this.synchronous;
    this.synchronous = span.context;
    try {
      return fn(span);
    } finally {
      this.synchronous = outer;
    }
  }
}

function inbound(tracer: WorkflowTracer): WorkflowInboundCallsInterceptor {
  return {
    execute: (input, next) =>
      tracer.runWorkflow(`RunWorkflow:${workflowInfo().workflowType}`, contextFromHeaders(input.headers), () =>
        next(input),
      ),
    handleSignal: (input, next) =>
      tracer.inSpan(`HandleSignal:${input.signalName}`, contextFromHeaders(input.headers), () => next(input)),
    handleUpdate: (input, next) =>
      tracer.inSpan(`HandleUpdate:${input.name}`, contextFromHeaders(input.headers), (span) => {
        span.setAttribute('temporalUpdateId', input.updateId);
        return next(input);
      }),
    validateUpdate: (input, next) =>
      tracer.inSpanSync(`ValidateUpdate:${input.name}`, contextFromHeaders(input.headers), (span) => {
        span.setAttribute('temporalUpdateId', input.updateId);
        next(input);
      }),
  };
}

function outbound(tracer: WorkflowTracer): WorkflowOutboundCallsInterceptor {
  /** the call's headers carry the span it runs in */
  const traced = <I extends { headers: Headers }>(input: I): I => ({
    ...input,
    headers: headersWithContext(input.headers, tracer.current()),
  });
  return {
    scheduleActivity: (input, next) =>
      tracer.inSpan(`StartActivity:${input.activityType}`, undefined, () => next(traced(input))),
    scheduleLocalActivity: (input, next) =>
      tracer.inSpan(`StartActivity:${input.activityType}`, undefined, () => next(traced(input))),
    startChildWorkflowExecution: (input, next) =>
      tracer.inSpan(`StartChildWorkflow:${input.workflowType}`, undefined, () => next(traced(input))),
    signalWorkflow: (input, next) =>
      tracer.inSpan(`SignalWorkflow:${input.signalName}`, undefined, () => next(traced(input))),
    continueAsNew: (input, next) =>
      tracer.inSpan(
        `ContinueAsNew:${input.options.workflowType}`,
        undefined,
        () => next(traced(input)),
        isContinueAsNew,
      ),
    getLogAttributes: (input, next) => {
      const span = tracer.current();
      if (!span) return next(input);
      return next({
        trace_id: span.traceId,
        span_id: span.spanId,
        trace_flags: `0${span.traceFlags.toString(16)}`,
        ...input,
      });
    },
  };
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  const tracer = new WorkflowTracer();
  return { inbound: [inbound(tracer)], outbound: [outbound(tracer)] };
};
