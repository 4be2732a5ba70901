/**
 * @module The CLI reaches the test stack's Temporal through @temporalio/envconfig only: a TOML profile naming the
 * stack's address and namespace (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE), no TEMPORAL_ADDRESS. A TLS setting that
 * cannot work fails with a message naming the TLS variables. TEMPORAL_API_KEY reaches the server as the
 * `authorization` metadata (a small gRPC server stands in: the dev server does not check keys), from the CLI, from the
 * API's client connection and from a worker's NativeConnection, and no output or log line shows it.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Metadata, Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { EXIT } from '../cli/errors';
import { parseConfig } from '../domain/config';
import { connectServices } from '../runtime/services';
import { loadTemporalTarget } from '../temporal/connection';
import { connectWorker } from '../temporal/worker-connection';
import { testTemporal } from '../testing/stack';

const root = path.join(__dirname, '..');
const { temporalAddress, namespace } = testTemporal();
const dir = mkdtempSync(path.join(tmpdir(), 'treewarden-profile-'));
const configFile = path.join(dir, 'temporal.toml');
writeFileSync(
  configFile,
  // the default profile points nowhere: only the named profile can reach the stack
  `[profile.default]\naddress = "127.0.0.1:1"\n\n[profile.stack]\naddress = "${temporalAddress}"\nnamespace = "${namespace}"\n`,
);

/** the CLI with none of the Temporal variables of this process, only the ones given */
function cli(args: string[], env: Record<string, string>) {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TEMPORAL_')));
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['node_modules/.bin/tsx', 'cli/index.ts', ...args],
      { cwd: root, env: { ...inherited, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

let connection: Connection;
const runId = randomUUID();

beforeAll(async () => {
  connection = await Connection.connect({ address: temporalAddress });
  // a workflow no worker serves: it stays RUNNING, which only the stack's namespace knows
  await new Client({ connection, namespace }).workflow.start('unserved', {
    workflowId: `agent-run:${runId}`,
    taskQueue: `unserved-${runId}`,
  });
});

afterAll(async () => {
  await new Client({ connection, namespace }).workflow.getHandle(`agent-run:${runId}`).terminate();
  await connection.close();
});

test('status finds a workflow through the profile TEMPORAL_PROFILE names in TEMPORAL_CONFIG_FILE', async () => {
  const { code, stdout, stderr } = await cli(['status', `agent-run:${runId}`, '--json'], {
    TEMPORAL_CONFIG_FILE: configFile,
    TEMPORAL_PROFILE: 'stack',
  });
  expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
  expect(JSON.parse(stdout)).toMatchObject({ workflowId: `agent-run:${runId}`, type: 'unserved', status: 'RUNNING' });
});

test('variables override the profile: TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE over the default profile', async () => {
  const { code, stdout } = await cli(['status', `agent-run:${runId}`, '--json'], {
    TEMPORAL_CONFIG_FILE: configFile,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
  });
  expect(code).toBe(EXIT.ok);
  expect(JSON.parse(stdout)).toMatchObject({ workflowId: `agent-run:${runId}`, status: 'RUNNING' });
});

test('TLS towards the plaintext stack is refused with a message naming the TLS variables', async () => {
  const { code, stderr } = await cli(['status', `agent-run:${runId}`, '--connect-timeout', '2000'], {
    TEMPORAL_CONFIG_FILE: configFile,
    TEMPORAL_PROFILE: 'stack',
    TEMPORAL_TLS: 'true',
  });
  expect(code).toBe(EXIT.error);
  expect(stderr).toContain(`cannot reach Temporal at ${temporalAddress} (namespace ${namespace}, TLS)`);
  expect(stderr).toContain('TEMPORAL_TLS_*');
});

test('a client certificate without its key is refused before connecting, naming both variables', async () => {
  const cert = path.join(dir, 'client.pem');
  writeFileSync(cert, 'not used');
  const { code, stderr } = await cli(['status', `agent-run:${runId}`], {
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TLS_CLIENT_CERT_PATH: cert,
  });
  expect(code).toBe(EXIT.error);
  expect(stderr).toContain('TEMPORAL_TLS_CLIENT_CERT_PATH');
  expect(stderr).toContain('TEMPORAL_TLS_CLIENT_KEY_PATH');
});

/** A frontend that answers GetSystemInfo (what a client calls when it connects) and records each call's metadata. */
async function recordingFrontend() {
  const seen: Metadata[] = [];
  const passThrough = (bytes: Buffer) => bytes;
  const method = (name: string) => ({
    path: `/temporal.api.workflowservice.v1.WorkflowService/${name}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
  });
  const server = new Server();
  server.addService({ GetSystemInfo: method('GetSystemInfo') } as ServiceDefinition, {
    GetSystemInfo: (call: { metadata: Metadata }, reply: (error: null, response: Buffer) => void) => {
      seen.push(call.metadata);
      reply(null, Buffer.alloc(0)); // an empty GetSystemInfoResponse
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { address: `127.0.0.1:${port}`, seen, close: () => server.forceShutdown() };
}

test('TEMPORAL_API_KEY reaches the frontend as the authorization metadata, and nothing the CLI prints shows it', async () => {
  const frontend = await recordingFrontend();
  const apiKey = `key-${randomUUID()}`;
  try {
    const { stdout, stderr } = await cli(['status', `agent-run:${runId}`, '--json'], {
      TEMPORAL_ADDRESS: frontend.address,
      TEMPORAL_API_KEY: apiKey,
      // an API key turns TLS on by itself; the stand-in frontend is plaintext
      TEMPORAL_TLS: 'false',
    });
    expect(frontend.seen.length).toBeGreaterThan(0);
    expect(frontend.seen[0].get('authorization')).toEqual([`Bearer ${apiKey}`]);
    expect(`${stdout}${stderr}`).not.toContain(apiKey);
  } finally {
    frontend.close();
  }
});

/**
 * Every line the connection code writes to its logger. (Temporal core's own log is not captured: the test runtime
 * (testing/runtime.ts) leaves it on core's console, since forwarding it keeps jest from exiting.)
 */
function capturedLogs() {
  const lines: string[] = [];
  const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
  return { log, lines };
}

test('the API and the worker connections send TEMPORAL_API_KEY as the authorization metadata; no log line shows it', async () => {
  const frontend = await recordingFrontend();
  const apiKey = `key-${randomUUID()}`;
  const { log, lines } = capturedLogs();
  const env = {
    TEMPORAL_ADDRESS: frontend.address,
    TEMPORAL_API_KEY: apiKey,
    // an API key turns TLS on by itself (envconfig); TEMPORAL_TLS=false keeps the native connection plaintext too,
    // so the grpc-js stand-in can answer it
    TEMPORAL_TLS: 'false',
  };
  try {
    // as api/main.ts and workers/main.ts connect: the same loader, the client's connection, then the worker's own
    const target = loadTemporalTarget(env);
    // the database is never reached: the client to it connects on its first query
    const config = parseConfig({ DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' });
    const services = await connectServices(config, target, log);
    const clientCalls = frontend.seen.length;
    expect(clientCalls).toBeGreaterThan(0);
    await services.close();
    const worker = await connectWorker(target, log);
    await worker.close();
    const workerCalls = frontend.seen.slice(clientCalls);
    expect(workerCalls.length).toBeGreaterThan(0);
    for (const metadata of frontend.seen) expect(metadata.get('authorization')).toEqual([`Bearer ${apiKey}`]);
  } finally {
    frontend.close();
  }
  const logged = lines.join('\n');
  expect(logged).toContain('connected to Temporal');
  expect(logged).toContain('worker connected to Temporal');
  expect(logged).toContain(`${frontend.address} (namespace default, plaintext + API key)`);
  expect(logged).not.toContain(apiKey);
});
