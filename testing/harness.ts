/**
 * An in-process treewarden against the run's real Temporal dev server and a fresh real
 * PostgreSQL database: worker, API (driven with fastify's inject) and helpers.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import { bundleWorkflows } from '../workers/workflow-code';
import pino from 'pino';
import { buildApi } from '../api/server';
import { parseConfig } from '../domain/config';
import { isTerminalRunStatus } from '../domain/statuses';
import { createWorker, type TreewardenWorker } from '../workers/create-worker';
import { connectServices, type Services } from '../runtime/services';
import { loadTemporalTarget } from '../temporal/connection';
import { freshDatabase, QUIET_BUNDLER_LOG, sharedWorkflowBundleFile, testStack } from './stack';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

let bundle: Promise<WorkflowBundle> | undefined;
/** The run's bundle (built once by global-setup.ts), else bundled once per test file: bundling takes seconds. */
export function workflowBundle(): Promise<WorkflowBundle> {
  const shared = sharedWorkflowBundleFile();
  bundle ??= shared
    ? fs.promises.readFile(shared, 'utf8').then((code) => ({ code }))
    : bundleWorkflows(QUIET_BUNDLER_LOG);
  return bundle;
}

export interface Harness {
  services: Services;
  /** the in-process worker; null when the test runs its workers as processes (worker-fleet.ts) */
  worker: TreewardenWorker | null;
  /** the environment this harness was configured from, for worker processes to share */
  env: Record<string, string>;
  request<T = any>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    token: string | null,
    body?: unknown,
  ): Promise<{ status: number; body: T }>;
  apiUrl: string;
  close(): Promise<void>;
}

export async function startHarness(
  overrides: Record<string, string> = {},
  options: { inProcessWorker?: boolean } = {},
): Promise<Harness> {
  const stack = testStack();
  const database = await freshDatabase();
  const taskQueue = `test-${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.namespace,
    TREEWARDEN_TASK_QUEUE: taskQueue,
    // a deployment per test file: its first build becomes current by itself, as a new fleet's does
    TREEWARDEN_DEPLOYMENT_NAME: taskQueue,
    TREEWARDEN_ADMIN_TOKEN: ADMIN_TOKEN,
    TREEWARDEN_WATCHDOG_DEBOUNCE_MS: '200',
    TREEWARDEN_STOP_GRACE_MS: '2000',
    TREEWARDEN_SHUTDOWN_GRACE_MS: '2000',
    // worker processes started from this env share one host: each takes a free metrics port
    TREEWARDEN_WORKER_METRICS_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // =0 runs every harness worker without a workflow cache, so each workflow task replays the whole history: any
    // test file becomes a determinism check (`npm run test:no-workflow-cache`)
    ...(process.env.TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS
      ? { TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS: process.env.TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS }
      : {}),
    ...overrides,
  };
  const config = parseConfig(env);
  const temporal = loadTemporalTarget(env);
  const services = await connectServices(config, temporal, pino({ level: config.LOG_LEVEL }));
  const connection = options.inProcessWorker === false ? null : await NativeConnection.connect(temporal.connection);
  const worker = connection && (await createWorker(services, { connection, workflowBundle: await workflowBundle() }));
  const running = worker?.run();
  const app = buildApi(services);
  const apiUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  services.config.TREEWARDEN_API_URL = apiUrl;
  env.TREEWARDEN_API_URL = apiUrl;
  return {
    services,
    worker,
    env,
    apiUrl,
    async request(method, url, token, body) {
      // real HTTP against the listening API (fastify's inject pulls an ESM-only dependency into jest)
      const response = await fetch(`${apiUrl}${url}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      await app.close();
      worker?.shutdown();
      await running;
      await connection?.close();
      await services.close();
      await database.drop();
    },
  };
}

/**
 * Polls `probe` until it returns a truthy value; fails with `what` after the deadline, saying what the probe last
 * answered. The default deadline is generous (a loaded 2-core host, jest's two workers): a deadline is a liveness
 * bound that only a failure ever reaches, never a timing claim.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  let answered = false;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
      answered = true;
      last = undefined;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const saw = last ? `: ${String(last)}` : answered ? ' (the probe last answered no)' : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${saw}`);
    }
    await sleep(100);
  }
}

/** The run's row as the database has it now. */
export const runRow = (h: Harness, runId: string) => h.services.db.run.findUniqueOrThrow({ where: { id: runId } });

/** The run's row once it has settled (succeeded, failed or cancelled). */
export const settled = (h: Harness, runId: string, timeoutMs = 60_000) =>
  eventually(
    `run ${runId} settled`,
    async () => {
      const run = await runRow(h, runId);
      return isTerminalRunStatus(run.status) ? run : null;
    },
    timeoutMs,
  );

/** A company with its board token, plus helpers to make agents and issues through the API. */
export async function seedCompany(h: Harness, name = 'Acme') {
  const company = await h.request('POST', '/api/companies', ADMIN_TOKEN, { name });
  if (company.status !== 201) throw new Error(`company: ${JSON.stringify(company.body)}`);
  const token: string = company.body.boardToken;
  const companyId: string = company.body.id;
  return {
    companyId,
    token,
    async agent(adapter: unknown = { type: 'noop' }, extra: Record<string, unknown> = {}) {
      const r = await h.request('POST', `/api/companies/${companyId}/agents`, token, {
        name: `agent-${randomBytes(3).toString('hex')}`,
        adapter,
        ...extra,
      });
      if (r.status !== 201) throw new Error(`agent: ${JSON.stringify(r.body)}`);
      return r.body as { id: string };
    },
    async issue(body: Record<string, unknown>) {
      const r = await h.request('POST', `/api/companies/${companyId}/issues`, token, body);
      if (r.status !== 201) throw new Error(`issue: ${JSON.stringify(r.body)}`);
      return r.body as { id: string; status: string; parentId: string | null };
    },
  };
}
