/**
 * @module Traces (issue 28): on the stack `npm start` builds, with the standard OTEL_EXPORTER_OTLP_ENDPOINT naming an
 * OTLP/HTTP receiver this test runs, one pause is one trace. The API's request span continues the caller's
 * `traceparent`; the client's workflow start and update, the tree-hold workflow (reported by the worker) and its
 * activities all carry the same trace id, and every span's parent is a span of that trace.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../testing/harness';
import { callApi, startServiceStack, type ServiceStack } from '../testing/service-stack';
import { testTemporal } from '../testing/stack';

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** what an OTLP/HTTP JSON export request carries, as far as this test reads it */
interface ExportRequest {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { spans: (Omit<ReceivedSpan, 'service' | 'attributes'> & { attributes?: OtlpAttribute[] })[] }[];
  }[];
}
interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

const attributesOf = (list: OtlpAttribute[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));

const received: ReceivedSpan[] = [];
let receiver: Server;
let stack: ServiceStack;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
        for (const { resource, scopeSpans } of body.resourceSpans) {
          const service = String(attributesOf(resource.attributes)['service.name']);
          for (const { spans } of scopeSpans)
            for (const span of spans) received.push({ ...span, service, attributes: attributesOf(span.attributes) });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  stack = await startServiceStack({
    temporalAddress: testTemporal().temporalAddress,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: '200' },
  });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
}, 120_000);

test("a pause's spans, from the HTTP request to the hold workflow's activities, share the caller's trace id", async () => {
  const company = (await callApi(stack.apiUrl, 'POST', '/api/companies', stack.adminToken, { name: 'traced' })).body;
  const root = (
    await callApi(stack.apiUrl, 'POST', `/api/companies/${company.id}/issues`, company.boardToken, { title: 'root' })
  ).body;
  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');
  const pause = await fetch(`${stack.apiUrl}/api/issues/${root.id}/tree-holds`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${company.boardToken}`,
      'content-type': 'application/json',
      traceparent: `00-${traceId}-${callerSpanId}-01`,
    },
    body: JSON.stringify({ mode: 'pause' }),
  });
  expect(pause.status).toBe(201);
  const holdId = ((await pause.json()) as { id: string }).id;
  // the workflow's own span ends with the workflow: the release (a trace of its own) completes it
  const release = await callApi(
    stack.apiUrl,
    'POST',
    `/api/issues/${root.id}/tree-holds/${holdId}/release`,
    company.boardToken,
    {},
  );
  expect(release.status).toBe(200);

  const trace = await eventually('the pause trace reaches the receiver whole', async () => {
    const spans = received.filter((span) => span.traceId === traceId);
    const names = new Set(spans.map((span) => `${span.service} ${span.name}`));
    const whole =
      names.has('treewarden-api StartWorkflow:treeHoldWorkflow') &&
      names.has('treewarden-worker RunWorkflow:treeHoldWorkflow') &&
      spans.some((span) => span.service === 'treewarden-worker' && span.name.startsWith('RunActivity:'));
    return whole ? spans : null;
  });

  const request = trace.find((span) => span.parentSpanId === callerSpanId);
  expect(request).toMatchObject({
    service: 'treewarden-api',
    kind: 2, // SERVER
    attributes: { 'http.route': '/api/issues/:id/tree-holds', 'http.request.method': 'POST' },
  });
  expect(trace.map((span) => span.name)).toEqual(
    expect.arrayContaining(['StartWorkflowUpdate:awaitPauseApplied', 'HandleUpdate:awaitPauseApplied']),
  );
  const known = new Set([callerSpanId, ...trace.map((span) => span.spanId)]);
  expect(trace.filter((span) => !known.has(span.parentSpanId)).map((span) => span.name)).toEqual([]);
  // the release was a request of its own, with its own trace
  const releaseSpans = await eventually('the release request span arrives', async () => {
    const spans = received.filter(
      (span) => span.attributes['http.route'] === '/api/issues/:id/tree-holds/:holdId/release',
    );
    return spans.length > 0 ? spans : null;
  });
  expect(releaseSpans.every((span) => span.traceId !== traceId)).toBe(true);
});
