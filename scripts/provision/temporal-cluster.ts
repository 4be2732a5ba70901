/**
 * Cluster profile: a real `temporal-server` (not the dev server) with PostgreSQL persistence and visibility.
 *
 *   1. ensureTemporalServerTools() (temporal-server-tools.ts):
 *      `go install go.temporal.io/server/cmd/server@v1.29.1 …/cmd/tools/sql@v1.29.1`
 *      into the same user cache as the CLI (`~/.cache/treewarden/bin/temporal-server`, `temporal-sql-tool`), under
 *      the same install lock and with the same staging + atomic rename (install-lock.ts, go-install.ts).
 *   2. setupTemporalDatabases() (same file):
 *      `temporal-sql-tool create-database / setup-schema -v 0.0 / update-schema -d <dir>`
 *      for the persistence and the visibility database, with the versioned schema dirs of the module source that
 *      `go install` put in the module cache (`go mod download -json` prints where).
 *   3. startTemporalCluster(): one node running frontend, history, matching and worker from a config YAML written
 *      here (postgres12 plugin; SQL visibility on PostgreSQL is "advanced visibility", so custom search attributes
 *      work), on free ports, with mTLS when given certificates (cluster-tls.ts); then creates the namespace and
 *      registers the search attributes.
 *   4. stop(): SIGTERM (the server drains and exits), SIGKILL after 20 s; optionally drops the two databases.
 * Scaling out is not done here: more treewarden worker processes/hosts point TEMPORAL_ADDRESS at the frontend.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { registerSearchAttributes, type SearchAttributeTypeName } from '../../temporal/search-attributes';
import { killOnExit, lineReader, spawnOrphanWatchdog } from './child-processes';
import { freePortsInRange } from '../../runtime/ports';
import { clientTlsOf, type TestCertificates } from './cluster-tls';
import { clusterConfigYaml, PORT_NAMES, type ClusterPorts } from './cluster-config';
import { dropDatabase } from './postgres';
import { dynamicConfigYaml, TREEWARDEN_DYNAMIC_CONFIG } from './temporal-dynamic-config';
import type { Log } from './temporal-cli';
import {
  clusterLog,
  ensureTemporalServerTools,
  pgTarget,
  setupTemporalDatabases,
  TEMPORAL_SERVER_VERSION,
  type PgTarget,
  type TemporalDatabases,
} from './temporal-server-tools';

export interface StartTemporalClusterOptions {
  /** admin URL of the PostgreSQL server (a role that may CREATE DATABASE) */
  pgAdminUrl: string;
  /** database names; both are created here and must not exist yet */
  databases: TemporalDatabases;
  /** the config file and the server log go here */
  dir: string;
  namespace?: string;
  searchAttributes: Record<string, SearchAttributeTypeName>;
  /** the frontend and the nodes require these certificates (mTLS); plaintext without */
  tls?: TestCertificates;
  log?: Log;
  startTimeoutMs?: number;
}

export interface TemporalCluster {
  /** frontend gRPC, `127.0.0.1:<port>` */
  address: string;
  namespace: string;
  pid: number;
  /** the server's stdout+stderr */
  logFile: string;
  /** SIGTERM, SIGKILL after 20 s; with `dropDatabases`, then drops both databases. Idempotent. */
  stop(opts?: { dropDatabases?: boolean }): Promise<void>;
}

/** Installs the tools, sets up the databases, starts the server, creates the namespace and its search attributes. */
export async function startTemporalCluster(opts: StartTemporalClusterOptions): Promise<TemporalCluster> {
  const log = opts.log ?? clusterLog;
  const namespace = opts.namespace ?? 'default';
  const tools = await ensureTemporalServerTools(log);
  const pg = pgTarget(opts.pgAdminUrl);
  const dropDbs = async () => {
    for (const db of [opts.databases.persistence, opts.databases.visibility]) await dropDatabase(opts.pgAdminUrl, db);
  };
  try {
    await setupTemporalDatabases(tools.sqlTool, pg, opts.databases, log);
  } catch (err) {
    await dropDbs().catch(() => undefined);
    throw err;
  }

  await fs.promises.mkdir(opts.dir, { recursive: true });
  const logFile = path.join(opts.dir, 'server.log');
  // Ports we picked can be taken before the server binds them: retry with new ones. Below the kernel's ephemeral
  // range (32768+) because the server stores its membership ports in a smallint column (cluster_membership).
  for (let attempt = 1; ; attempt++) {
    const picked = await freePortsInRange(PORT_NAMES.length, 20_000, 32_767);
    const ports = Object.fromEntries(PORT_NAMES.map((name, i) => [name, picked[i]])) as ClusterPorts;
    const dynamicConfigPath = path.resolve(opts.dir, 'dynamic-config.yaml');
    await fs.promises.writeFile(dynamicConfigPath, dynamicConfigYaml(TREEWARDEN_DYNAMIC_CONFIG));
    const config = clusterConfigYaml(pg, opts.databases, ports, dynamicConfigPath, opts.tls);
    await fs.promises.writeFile(path.join(opts.dir, 'cluster.yaml'), config);
    try {
      const cluster = await startOnce(
        tools.server,
        opts,
        namespace,
        `127.0.0.1:${ports.frontend}`,
        logFile,
        dropDbs,
        log,
      );
      log(
        `temporal-server ${TEMPORAL_SERVER_VERSION} (pid ${cluster.pid}) ` +
          `serving namespace ${namespace} at ${cluster.address}`,
      );
      return cluster;
    } catch (err) {
      const portClash = /address already in use/i.test(String(err));
      if (!portClash || attempt >= 3) {
        await dropDbs().catch(() => undefined);
        throw err;
      }
      log(`port collision starting temporal-server (attempt ${attempt}); retrying with other ports`);
    }
  }
}

async function startOnce(
  bin: string,
  opts: StartTemporalClusterOptions,
  namespace: string,
  address: string,
  logFile: string,
  dropDbs: () => Promise<void>,
  log: Log,
): Promise<TemporalCluster> {
  // `--config <dir> --env cluster` loads <dir>/cluster.yaml; --allow-no-auth: no authorizer, as in development.
  const args = ['--root', opts.dir, '--config', '.', '--env', 'cluster', '--allow-no-auth', 'start'];
  const out = fs.createWriteStream(logFile, { flags: 'a' });
  const tail: string[] = [];
  const child = spawn(bin, args, { cwd: opts.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const onLine = (line: string) => {
    out.write(`${line}\n`);
    tail.push(line);
    if (tail.length > 40) tail.shift();
  };
  lineReader(child.stdout, onLine);
  lineReader(child.stderr, onLine);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (err) => {
      onLine(`spawn error: ${err.message}`);
      resolve();
    });
  });
  const unregister = killOnExit(child);
  const watchdog = child.pid === undefined ? undefined : spawnOrphanWatchdog(child.pid);
  const gone = () => child.exitCode !== null || child.signalCode !== null || child.pid === undefined;

  let stopping: Promise<void> | undefined;
  let dropped = false;
  const stopServer = (): Promise<void> =>
    (stopping ??= (async () => {
      if (!gone()) {
        child.kill('SIGTERM');
        const killed = await Promise.race([exited.then(() => false), sleep(20_000).then(() => true)]);
        if (killed) {
          log(`temporal-server (pid ${child.pid}) ignored SIGTERM for 20 s; sending SIGKILL`);
          child.kill('SIGKILL');
        }
      }
      await exited;
      unregister();
      if (watchdog?.pid !== undefined && watchdog.exitCode === null) process.kill(watchdog.pid, 'SIGKILL');
      await new Promise<void>((resolve) => out.end(() => resolve()));
    })());
  const stop = async ({ dropDatabases = false }: { dropDatabases?: boolean } = {}) => {
    await stopServer();
    if (dropDatabases && !dropped) {
      dropped = true;
      await dropDbs();
    }
  };

  try {
    // Healthy = the frontend answers and the namespace exists (it is not created by the server itself).
    const deadline = Date.now() + (opts.startTimeoutMs ?? 120_000);
    const tls = opts.tls ? { tls: clientTlsOf(opts.tls) } : {};
    let lastError: unknown;
    for (;;) {
      if (gone())
        throw new Error(`temporal-server exited during start-up (code ${child.exitCode}, signal ${child.signalCode})`);
      if (Date.now() > deadline) throw new Error(`temporal-server at ${address} not ready: ${String(lastError)}`);
      const connection = Connection.lazy({ address, connectTimeout: '2s', ...tls });
      try {
        await connection.ensureConnected();
        await ensureNamespace(connection, namespace);
        await registerSearchAttributes(connection, namespace, opts.searchAttributes, log);
        break;
      } catch (err) {
        lastError = err instanceof Error ? err.message : err;
      } finally {
        await connection.close();
      }
      await sleep(500);
    }
  } catch (err) {
    await stopServer();
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}\n${bin} ${args.join(' ')}\n` +
        `--- server output (tail) ---\n${tail.join('\n')}`,
    );
  }
  child.unref();
  for (const s of [child.stdout, child.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.();
  return { address, namespace, pid: child.pid!, logFile, stop };
}

const GRPC_ALREADY_EXISTS = 6;

/** Registers `namespace` (1 day retention) unless it exists, then waits until the frontend describes it. */
async function ensureNamespace(connection: Connection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
  await connection.workflowService.describeNamespace({ namespace });
}
