/**
 * @module The operator CLI without a server: exit codes, help, usage errors, an unreachable
 * Temporal, and an API refusal mapped to its exit code.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { CommanderError } from 'commander';
import { EXIT, exitCodeFor, UsageError } from '../cli/errors';
import { TreewardenApiError } from '../client';

const root = path.join(__dirname, '..');
const RUN_ID = '4b0f3c0e-8d0e-4a43-9c39-5b1e2b4b8e51';

function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['node_modules/.bin/tsx', 'cli/index.ts', ...args],
      { cwd: root, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

async function listen(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

test('exitCodeFor maps every failure to its documented code', () => {
  const grpcDenied = Object.assign(new Error('denied'), { code: 7, details: 'denied', metadata: {} });
  const cases: [unknown, number][] = [
    [new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'), EXIT.ok],
    [new CommanderError(1, 'commander.missingArgument', "error: missing required argument 'id'"), EXIT.usage],
    [new UsageError('bad id'), EXIT.usage],
    [new TreewardenApiError(400, 'bad_request', 'malformed id'), EXIT.usage],
    [new WorkflowNotFoundError('gone', 'agent-run:x', undefined), EXIT.notFound],
    [new TreewardenApiError(404, 'not_found', 'run not found'), EXIT.notFound],
    [new TreewardenApiError(409, 'conflict', 'not active'), EXIT.conflict],
    [new TreewardenApiError(409, 'reconciliation_required', 'resolve the execution blockers first'), EXIT.conflict],
    [new TreewardenApiError(401, 'unauthorized', 'no token'), EXIT.denied],
    [new TreewardenApiError(403, 'forbidden', 'board only'), EXIT.denied],
    [new ServiceError('describe failed', { cause: grpcDenied }), EXIT.denied],
    [new TreewardenApiError(503, 'unavailable', 'internal error'), EXIT.error],
    [new TypeError('fetch failed'), EXIT.error],
    ['a string', EXIT.error],
  ];
  for (const [error, code] of cases) expect([error, exitCodeFor(error)]).toEqual([error, code]);
  expect(EXIT).toEqual({ ok: 0, error: 1, usage: 2, notFound: 3, conflict: 4, denied: 5 });
});

test('--help lists the commands and the exit codes', async () => {
  const { code, stdout } = await cli(['--help']);
  expect(code).toBe(0);
  const listed = [...stdout.matchAll(/^ {2}(\w+) \[options\]/gm)].map((m) => m[1]);
  expect(listed).toEqual([
    'worker',
    'api',
    'status',
    'stop',
    'inspect',
    'ack',
    'reconcile',
    'release',
    'tree',
    'pause',
  ]);
  expect(stdout).toMatch(/Exit codes:[\s\S]*4 {2}conflict/);
});

test('usage errors exit 2, with a JSON error on stdout under --json', async () => {
  const missing = await cli(['status']);
  expect(missing.code).toBe(EXIT.usage);
  expect(missing.stderr).toContain("missing required argument 'id'");

  const malformed = await cli(['status', 'task-watchdog:not-a-uuid', '--json']);
  expect(malformed.code).toBe(EXIT.usage);
  expect(JSON.parse(malformed.stdout)).toEqual({
    error: { message: expect.stringContaining('task-watchdog:not-a-uuid'), exitCode: EXIT.usage },
  });

  const noToken = await cli(['stop', RUN_ID], { TREEWARDEN_TOKEN: '' });
  expect(noToken.code).toBe(EXIT.usage);
  expect(noToken.stderr).toContain('TREEWARDEN_TOKEN is not set');

  expect((await cli(['launch'])).code).toBe(EXIT.usage);
});

test('status against an address nothing listens on exits 1 with a message', async () => {
  const closed = createServer();
  const port = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
  const { code, stderr } = await cli(['status', `agent-run:${RUN_ID}`, '--connect-timeout', '300'], {
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
  });
  expect(code).toBe(EXIT.error);
  expect(stderr).toContain(`cannot reach Temporal at 127.0.0.1:${port}`);
});

test('stop passes the API refusal on as its exit code', async () => {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url} ${request.headers.authorization}`);
    response
      .writeHead(409, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { code: 'conflict', message: 'run already finished' } }));
  });
  const port = await listen(server);
  try {
    const { code, stdout, stderr } = await cli(['stop', RUN_ID, '--json'], {
      TREEWARDEN_API_URL: `http://127.0.0.1:${port}`,
      TREEWARDEN_TOKEN: 'twb_test',
    });
    expect(code).toBe(EXIT.conflict);
    expect(stderr).toContain('run already finished');
    expect(JSON.parse(stdout)).toEqual({
      error: { message: 'run already finished', exitCode: EXIT.conflict, status: 409, code: 'conflict' },
    });
    expect(requests).toEqual([`POST /api/work/${RUN_ID}/stop Bearer twb_test`]);
  } finally {
    server.close();
  }
});
