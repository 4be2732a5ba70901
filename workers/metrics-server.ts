/** A worker process's /healthz (for probes and supervisors) and /metrics (Prometheus text). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from '@temporalio/worker';
import type { Containment } from '../processes/cgroups';
import type { Sandbox } from '../processes/sandbox';
import { coreMetricsText } from './core-metrics';
import type { Metrics } from './metrics';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  host: string;
  port: number;
  metrics: Metrics;
  worker: Pick<Worker, 'getState'>;
  /** said in /healthz: how this host keeps a run's processes together */
  containment: Containment;
  /** said in /healthz: how this host confines an agent, and why not when it cannot */
  sandbox: Sandbox;
  /** where Temporal core serves its own metrics, relayed after treewarden's (workers/core-metrics.ts) */
  coreMetrics?: string;
}): Promise<MetricsServer> {
  const { metrics, worker } = options;
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') {
      response.writeHead(405).end();
    } else if (path === '/healthz') {
      // healthy only while polling: a draining worker is taking no new work and should be replaced
      const state = worker.getState();
      response
        .writeHead(state === 'RUNNING' ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ state, containment: options.containment.kind, sandbox: sandboxHealth(options.sandbox) }));
    } else if (path === '/metrics') {
      const core = options.coreMetrics;
      Promise.all([metrics.registry.metrics(), core ? coreMetricsText(core) : '']).then(
        ([own, sdk]) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(own + sdk),
        (error: unknown) => response.writeHead(500).end(String(error)),
      );
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}`,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/** `namespaces`, or why agents run unconfined (`accepted`) or are refused */
const sandboxHealth = (sandbox: Sandbox) =>
  sandbox.kind === 'namespaces'
    ? { kind: sandbox.kind }
    : { kind: sandbox.kind, reason: sandbox.reason, agents: sandbox.accepted ? 'unconfined' : 'refused' };
