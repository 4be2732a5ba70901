/**
 * One autocannon pass against one URL with one bearer token, autocannon running as a process of its own (the CLI
 * in node_modules, `--json`), so the load generator's CPU is in neither the API nor the bench process. Scenario 8
 * divides the API process tree's CPU over the pass by the requests autocannon completed, and reports autocannon's
 * own CPU per request beside it, to show the generator costs the box little.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../testing/stack';
import { cpuSeconds, reapedChildrenCpuSeconds } from './process-cpu';

const AUTOCANNON = path.join(REPO_ROOT, 'node_modules/.bin/autocannon');

export interface LoadPass {
  requestsPerSecond: number;
  /** autocannon's latencies, ms */
  p50: number;
  p99: number;
  /** CPU milliseconds per completed request */
  apiCpuPerRequest: number;
  generatorCpuPerRequest: number;
}

/** The fields of autocannon's `--json` report this pass reads. */
interface AutocannonReport {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  latency: { p50: number; p99: number };
  requests: { total: number };
}

function runAutocannon(args: string[]): Promise<AutocannonReport> {
  const child = spawn(AUTOCANNON, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => stdout.push(d));
  child.stderr.on('data', (d: Buffer) => stderr.push(d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`autocannon exited with ${code}: ${Buffer.concat(stderr).toString()}`));
      else resolve(JSON.parse(Buffer.concat(stdout).toString()) as AutocannonReport);
    });
  });
}

/** `connections` clients asking GET `url` for `seconds`; any answer but a 2xx fails the pass. */
export async function autocannonPass(
  url: string,
  token: string,
  apiPid: number,
  connections: number,
  seconds: number,
): Promise<LoadPass> {
  const apiBefore = cpuSeconds({ api: apiPid }).api;
  // autocannon is the only child of this process that exits during the pass: its CPU is what the reaped gain
  const generatorBefore = reapedChildrenCpuSeconds(process.pid);
  const report = await runAutocannon([
    '--json',
    ...['-c', String(connections), '-d', String(seconds)],
    ...['-H', `authorization=Bearer ${token}`],
    url,
  ]);
  const apiCpu = cpuSeconds({ api: apiPid }).api - apiBefore;
  const generatorCpu = reapedChildrenCpuSeconds(process.pid) - generatorBefore;
  if (report.non2xx || report.errors || report.timeouts)
    throw new Error(
      `autocannon on ${url}: ${report.non2xx} non-2xx, ${report.errors} errors, ${report.timeouts} timeouts ` +
        `(status codes ${JSON.stringify(report.statusCodeStats)})`,
    );
  const requests = report.requests.total;
  return {
    requestsPerSecond: requests / report.duration,
    p50: report.latency.p50,
    p99: report.latency.p99,
    apiCpuPerRequest: (apiCpu * 1000) / requests,
    generatorCpuPerRequest: (generatorCpu * 1000) / requests,
  };
}
