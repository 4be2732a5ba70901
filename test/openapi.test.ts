/**
 * @module The OpenAPI document is the API's contract: it is served without a token, validates as
 * OpenAPI 3.0, lists every route the server has, is rendered at /api/docs, and the typed client can
 * not drift from it (its generated types are current, client/contract.ts compiles against them, and
 * every client method calls a documented operation).
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { readFileSync } from 'node:fs';
import { Agent, answers, Run } from '../api/schemas';
import { buildApi } from '../api/server';
import { createTreewardenClient } from '../client';
import { GENERATED_TYPES, typesFor } from '../scripts/openapi-types';
import { ADMIN_TOKEN, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { inProcessWorker: false });
});
afterAll(async () => h?.close());

type Operation = {
  summary?: string;
  parameters?: unknown[];
  responses?: Record<string, { content?: Record<string, { schema: unknown }> }>;
};
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };
const served = async (): Promise<Document> => (await fetch(`${h.apiUrl}/api/openapi.json`)).json() as Promise<Document>;
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operationsOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => HTTP_METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );

test('the document is served without a token, validates as OpenAPI 3.0 and lists every route of the server', async () => {
  const document = await served();
  expect(document.openapi).toBe('3.0.3');
  await SwaggerParser.validate(structuredClone(document) as never);

  // the routes a freshly built server registers, as fastify sees them
  const app = buildApi(h.services);
  const routes: string[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      if (method !== 'HEAD' && (route.url.startsWith('/api/') || route.url === '/healthz'))
        routes.push(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
  });
  await app.ready();
  await app.close();
  const documented = operationsOf(document);
  const apiRoutes = routes.filter((r) => !r.includes('/api/docs') && !r.endsWith('/api/openapi.json'));
  expect(apiRoutes.length).toBeGreaterThan(25);
  expect([...documented].sort()).toEqual([...new Set(apiRoutes)].sort());
  // console pages are not API operations
  expect(documented.some((o) => o.includes('/ui'))).toBe(false);
  // every operation says what it does, and its path ids are declared
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      expect({ operation: `${method} ${path}`, summary: typeof operation.summary }).toEqual({
        operation: `${method} ${path}`,
        summary: 'string',
      });
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (operation.parameters ?? [])
        .filter((p) => (p as { in: string }).in === 'path')
        .map((p) => (p as { name: string }).name);
      expect(declared.sort()).toEqual(names.sort());
      // and every answer is described: its successes, and the error body of a refusal or failure
      const responses = operation.responses ?? {};
      const successes = Object.keys(responses).filter((status) => /^2\d\d$/.test(status));
      expect({
        operation: `${method} ${path}`,
        described: successes.length > 0,
      }).toEqual({ operation: `${method} ${path}`, described: true });
      for (const status of successes.filter((s) => s !== '204')) {
        const schema = typeof responses[status].content?.['application/json'].schema;
        expect({
          operation: `${method} ${path} ${status}`,
          schema,
        }).toEqual({ operation: `${method} ${path} ${status}`, schema: 'object' });
      }
      const errorBody = { $ref: '#/components/schemas/ErrorBody' };
      if (path !== '/healthz') {
        for (const status of ['4XX', '5XX'])
          expect(responses[status].content?.['application/json'].schema).toEqual(errorBody);
      }
    }
  }
});

test('the route schema is the validation: what the document forbids is a 400 naming the field, and nothing is written', async () => {
  const document = await served();
  const body = (
    document.paths['/api/companies'].post as unknown as {
      requestBody: {
        content: { 'application/json': { schema: { additionalProperties: boolean; required: string[] } } };
      };
    }
  ).requestBody.content['application/json'].schema;
  expect(body).toMatchObject({ additionalProperties: false, required: ['name'] });
  const before = await h.services.db.company.count();
  const extra = await h.request('POST', '/api/companies', ADMIN_TOKEN, { name: 'Acme', plan: 'gold' });
  expect(extra.status).toBe(400);
  expect(extra.body.error.message).toContain('plan');
  const badId = await h.request('GET', '/api/issues/not-a-uuid/tree', ADMIN_TOKEN);
  expect(badId.status).toBe(400);
  expect(badId.body.error.message).toBe('malformed id in path: id must be a UUID');
  expect(await h.services.db.company.count()).toBe(before);
});

test('an answer that does not match its documented shape is never sent: the request fails loudly', async () => {
  const app = buildApi(h.services);
  // a handler drifting from its schema: a run without most of its fields, and a status that is no run status
  app.get(
    '/drifting',
    { schema: { hide: true, response: answers({ 200: Run }) }, config: { public: true } },
    async () => ({ id: 'r', status: 'sleeping' }),
  );
  const answer = await app.inject({ method: 'GET', url: '/drifting' });
  await app.close();
  expect(answer.statusCode).toBe(503);
  expect(answer.json().error.message).toContain('the answer does not match its schema');
  expect(answer.json().error.message).toContain('status');
});

test('an answer is sent as documented: fields the schema does not name are left out', async () => {
  const app = buildApi(h.services);
  const agent = {
    id: '00000000-0000-4000-8000-000000000000',
    companyId: '00000000-0000-4000-8000-000000000001',
    name: 'a',
    status: 'active',
    adapter: { type: 'noop' },
  };
  app.get(
    '/extra',
    { schema: { hide: true, response: answers({ 200: Agent }) }, config: { public: true } },
    async () => ({ ...agent, createdAt: new Date(0), secretColumn: 'x' }),
  );
  const answer = await app.inject({ method: 'GET', url: '/extra' });
  await app.close();
  expect(answer.statusCode).toBe(200);
  expect(answer.json()).toEqual({ ...agent, createdAt: '1970-01-01T00:00:00.000Z' });
});

test('the rendered document is at /api/docs', async () => {
  const page = await fetch(`${h.apiUrl}/api/docs/static/index.html`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('swagger-ui');
  const initializer = await (await fetch(`${h.apiUrl}/api/docs/static/swagger-initializer.js`)).text();
  expect(initializer).toContain("resolveUrl('./json')");
  expect(await (await fetch(`${h.apiUrl}/api/docs/json`)).json()).toEqual(await served());
});

test('the committed client types are the ones generated from the served document', async () => {
  expect(readFileSync(GENERATED_TYPES, 'utf8')).toBe(typesFor(await served()));
});

test('every client method calls a documented operation, and every operation but the health check and an alias has a method', async () => {
  const document = await served();
  const matchers = operationsOf(document).map((operation) => {
    const [method, path] = operation.split(' ');
    return { operation, method, pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`) };
  });
  const called: { method: string; path: string }[] = [];
  // a recording transport: the client's requests are listed, not sent
  const client = createTreewardenClient({
    baseUrl: 'http://client.invalid',
    token: 'recording',
    fetch: async (url, init) => {
      called.push({ method: init?.method ?? 'GET', path: new URL(String(url)).pathname });
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  const id = '00000000-0000-4000-8000-000000000000';
  for (const method of Object.values(client) as ((...args: unknown[]) => Promise<unknown>)[]) await method(id, id, {});
  expect(called.length).toBe(Object.keys(client).length);
  const covered = new Set<string>();
  for (const call of called) {
    const match = matchers.filter((m) => m.method === call.method && m.pattern.test(call.path));
    expect({ call, documented: match.length }).toEqual({ call, documented: 1 });
    covered.add(match[0].operation);
  }
  expect(
    matchers
      .map((m) => m.operation)
      .filter((o) => !covered.has(o))
      .sort(),
  ).toEqual(['GET /api/runs/{id}/inspect', 'GET /healthz']);
});
