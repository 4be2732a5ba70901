/**
 * The worker's half of tracing (runtime/tracing.ts): each activity's span continues the trace its workflow passed in
 * the activity's headers, and the workflows' own spans (made in the sandbox, which cannot export) reach the process's
 * span processor through the SDK's exporter sink. Every worker registers the sink, tracing or not: the bundled
 * workflow interceptors call it whenever a span ends.
 */
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { Tracing } from '../runtime/tracing';

export const activityTracing: ActivityInterceptorsFactory = (ctx) => ({
  inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
  outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
});

export function workflowSpanSinks(tracing: Tracing): InjectedSinks<OpenTelemetrySinks> {
  return { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) };
}
