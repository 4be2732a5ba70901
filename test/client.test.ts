/** @module The typed API client against a stub HTTP server: parsed bodies and TreewardenApiError. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTreewardenClient, TreewardenApiError, type TreewardenClient } from '../client';

const ISSUE_ID = '0d6c1f7e-3f1e-4c55-9a51-0f6b2b8f7a10';
const HOLD_ID = '6a3e8b52-53a8-4f0e-8a5e-2a4f3b9c1d22';

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  contentType?: string;
  body: string;
}

let seen: Seen[] = [];
let respond: (request: IncomingMessage, response: ServerResponse) => void;
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    seen.push({
      method: request.method!,
      url: request.url!,
      authorization: request.headers.authorization,
      contentType: request.headers['content-type'],
      body,
    });
    respond(request, response);
  });
});
let client: TreewardenClient;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = createTreewardenClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    token: 'twb_secret',
  });
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  seen = [];
});

const json = (status: number, body: unknown) => (_request: IncomingMessage, response: ServerResponse) =>
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

test('an error response throws TreewardenApiError with its status, code and message', async () => {
  respond = json(409, { error: { code: 'conflict', message: 'x' } });
  const error = await client.releaseTreeHold(ISSUE_ID, HOLD_ID, { wakeAgents: true }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TreewardenApiError);
  expect(error).toMatchObject({
    name: 'TreewardenApiError',
    status: 409,
    code: 'conflict',
    message: 'x',
    details: undefined,
  });
  expect(seen).toEqual([
    {
      method: 'POST',
      url: `/api/issues/${ISSUE_ID}/tree-holds/${HOLD_ID}/release`,
      authorization: 'Bearer twb_secret',
      contentType: 'application/json',
      body: '{"wakeAgents":true}',
    },
  ]);
});

test('a non-JSON error (a proxy page) is classified by status', async () => {
  respond = (_request, response) =>
    response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>');
  await expect(client.getRun(ISSUE_ID)).rejects.toMatchObject({
    status: 502,
    code: 'unavailable',
    message: `GET /api/runs/${ISSUE_ID}: HTTP 502`,
  });
});

test('a success returns the parsed body; bodiless calls send no content type', async () => {
  const issue = {
    id: ISSUE_ID,
    companyId: HOLD_ID,
    parentId: null,
    title: 't',
    status: 'todo',
    assigneeAgentId: null,
    originKind: 'manual',
    originId: null,
    blockedByIssueIds: [],
    blockedReason: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  };
  respond = json(200, { items: [issue] });
  await expect(client.listIssues(HOLD_ID, { parentId: ISSUE_ID })).resolves.toEqual({ items: [issue] });
  expect(seen).toEqual([
    {
      method: 'GET',
      url: `/api/companies/${HOLD_ID}/issues?parentId=${ISSUE_ID}`,
      authorization: 'Bearer twb_secret',
      contentType: undefined,
      body: '',
    },
  ]);

  respond = json(200, null);
  await expect(client.getWatchdog(ISSUE_ID)).resolves.toBeNull();

  respond = json(201, { id: HOLD_ID, members: [] });
  await client.pauseTree(ISSUE_ID, { reason: 'deploy' });
  expect(seen[2]).toMatchObject({
    method: 'POST',
    url: `/api/issues/${ISSUE_ID}/tree-holds`,
    body: '{"mode":"pause","reason":"deploy"}',
  });
});
