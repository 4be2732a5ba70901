/**
 * The stack `npm start` builds, as a child process: `scripts/start.ts` with its own data folder, so its worker and
 * its API run as separate processes against the embedded PostgreSQL (no DATABASE_URL) or the given one. Used by
 * test/embedded-stack.test.ts and benchmark scenario 8, which drive it over HTTP like a main app.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Client } from 'pg';
import { freePort } from '../runtime/ports';
import { REPO_ROOT } from './stack';

export interface ServiceStack {
  apiUrl: string;
  /** the start script's pid (its worker and API are its children) */
  pid: number;
  adminToken: string;
  dataDir: string;
  /** the embedded PostgreSQL's port and password; absent when a DATABASE_URL was given */
  embedded?: { port: number; password: string };
  /** SIGTERM to the start script (it stops worker, API and PostgreSQL in order), then the data folder goes */
  stop(): Promise<void>;
  /** everything the start script, its worker and its API printed */
  output(): string;
}

export async function startServiceStack(opts: {
  temporalAddress: string;
  databaseUrl?: string;
  logLevel?: string;
  /** more variables for the start script, its worker and its API */
  env?: NodeJS.ProcessEnv;
}): Promise<ServiceStack> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tw-service-stack-'));
  const apiPort = await freePort();
  const taskQueue = `stack-${randomBytes(4).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TREEWARDEN_DATA_DIR: dataDir,
    TEMPORAL_ADDRESS: opts.temporalAddress, // given: the start script starts no dev server of its own
    TREEWARDEN_TASK_QUEUE: taskQueue,
    // a deployment per stack, as the harness gives each file (testing/harness.ts): stacks of files running at once in
    // one namespace are separate installations, and one's live build must not be another's (parallel jest left
    // runs of one stack unstarted while another stack's workers polled as the same deployment version)
    TREEWARDEN_DEPLOYMENT_NAME: taskQueue,
    TREEWARDEN_API_PORT: String(apiPort),
    TREEWARDEN_WORKER_METRICS_PORT: '0',
    LOG_LEVEL: opts.logLevel ?? 'warn',
  };
  delete env.DATABASE_URL;
  delete env.TREEWARDEN_ADMIN_TOKEN;
  delete env.TREEWARDEN_EMBEDDED_PG_PORT;
  Object.assign(env, opts.env);
  if (opts.databaseUrl) env.DATABASE_URL = opts.databaseUrl;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/start.ts')], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
  child.stdout!.on('data', (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let embeddedPort: number | undefined;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`scripts/start.ts exited (${code}) before it was ready:\n${output.join('')}`)),
    );
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const pg = /embedded PostgreSQL (\d+)/.exec(line);
      if (pg) embeddedPort = Number(pg[1]);
      if (line.includes('ready; Ctrl-C stops everything')) resolve();
    });
  });
  const read = (name: string) => fs.readFileSync(path.join(dataDir, name), 'utf8').trim();
  return {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    pid: child.pid!,
    adminToken: opts.env?.TREEWARDEN_ADMIN_TOKEN ?? read('admin-token'),
    dataDir,
    embedded: embeddedPort === undefined ? undefined : { port: embeddedPort, password: read('postgres.password') },
    output: () => output.join(''),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The stack's embedded database, as its superuser. */
export function embeddedDatabaseUrl(stack: Pick<ServiceStack, 'embedded'>): string {
  if (!stack.embedded) throw new Error('the stack was given a DATABASE_URL: it has no embedded PostgreSQL');
  const { port, password } = stack.embedded;
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/treewarden`;
}

/** A query on the stack's embedded database itself, for facts the API does not expose. */
export async function stackSql<T extends object>(
  stack: Pick<ServiceStack, 'embedded'>,
  text: string,
  values: unknown[],
): Promise<T[]> {
  const client = new Client({ connectionString: embeddedDatabaseUrl(stack) });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

export interface ApiResponse {
  status: number;
  body: any;
}

export async function callApi(
  apiUrl: string,
  method: string,
  url: string,
  token: string,
  body?: unknown,
): Promise<ApiResponse> {
  const response = await fetch(`${apiUrl}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

export interface WorkloadResult {
  /** mismatches between what a client wrote and what it got back, and unexpected statuses */
  problems: string[];
  /** latency of every request, ms */
  latencies: number[];
}

/**
 * One main-app client on its own company: creates an agent, then `rounds` × (create an issue, patch it, comment
 * on it, read it back), then lists its issues; every response is compared with what the client wrote.
 */
export async function clientSession(
  stack: Pick<ServiceStack, 'apiUrl' | 'adminToken'>,
  n: number,
  rounds: number,
  result: WorkloadResult,
): Promise<void> {
  const call = async (what: string, method: string, url: string, token: string, body: unknown, status: number) => {
    const t0 = performance.now();
    const response = await callApi(stack.apiUrl, method, url, token, body);
    result.latencies.push(performance.now() - t0);
    if (response.status !== status)
      result.problems.push(`client ${n} ${what}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const company = await call(
    'create company',
    'POST',
    '/api/companies',
    stack.adminToken,
    { name: `client ${n}` },
    201,
  );
  const token: string = company?.boardToken;
  const agent = await call(
    'create agent',
    'POST',
    `/api/companies/${company?.id}/agents`,
    token,
    { name: `agent ${n}`, adapter: { type: 'noop' } },
    201,
  );
  const mine = new Map<string, string>();
  for (let round = 0; round < rounds; round++) {
    const title = `client ${n} round ${round} ${randomBytes(4).toString('hex')}`;
    const issue = await call(
      'create issue',
      'POST',
      `/api/companies/${company?.id}/issues`,
      token,
      { title, assigneeAgentId: agent?.id },
      201,
    );
    if (issue?.title !== title) result.problems.push(`client ${n} created ${title} but got ${JSON.stringify(issue)}`);
    const renamed = `${title} (renamed)`;
    const patched = await call(
      'patch issue',
      'PATCH',
      `/api/issues/${issue?.id}`,
      token,
      { title: renamed, status: 'in_progress' },
      200,
    );
    if (patched?.title !== renamed || patched?.status !== 'in_progress')
      result.problems.push(`client ${n} patched ${issue?.id} but got ${JSON.stringify(patched)}`);
    const note = `note ${round} from ${n}`;
    const comment = await call('comment', 'POST', `/api/issues/${issue?.id}/comments`, token, { body: note }, 201);
    if (comment?.issueId !== issue?.id || comment?.body !== note)
      result.problems.push(`client ${n} commented on ${issue?.id} but got ${JSON.stringify(comment)}`);
    const read = await call('read issue', 'GET', `/api/issues/${issue?.id}`, token, undefined, 200);
    if (read?.id !== issue?.id || read?.title !== renamed || read?.companyId !== company?.id)
      result.problems.push(`client ${n} read ${issue?.id} but got ${JSON.stringify(read)}`);
    mine.set(issue?.id, renamed);
  }
  const listed = await call('list issues', 'GET', `/api/companies/${company?.id}/issues`, token, undefined, 200);
  const seen = new Map<string, string>(
    (listed?.items ?? []).map((i: { id: string; title: string }) => [i.id, i.title]),
  );
  if (JSON.stringify([...seen].sort()) !== JSON.stringify([...mine].sort()))
    result.problems.push(`client ${n} listed ${JSON.stringify([...seen])}, wrote ${JSON.stringify([...mine])}`);
}

/** Requests one clientSession makes. */
export const requestsPerSession = (rounds: number) => 3 + 4 * rounds;
