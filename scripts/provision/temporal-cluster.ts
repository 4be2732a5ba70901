/**
 * Cluster profile: a real `temporal-server` (not the dev server) with PostgreSQL persistence and visibility.
 *
 *   1. ensureTemporalServerTools(): `go install go.temporal.io/server/cmd/server@v1.29.1 …/cmd/tools/sql@v1.29.1`
 *      into the same user cache as the CLI (`~/.cache/treewarden/bin/temporal-server`, `temporal-sql-tool`), under
 *      the same install lock and with the same staging + atomic rename (install-lock.ts, go-install.ts).
 *   2. setupTemporalDatabases(): `temporal-sql-tool create-database / setup-schema -v 0.0 / update-schema -d <dir>`
 *      for the persistence and the visibility database, with the versioned schema dirs of the module source that
 *      `go install` put in the module cache (`go mod download -json` prints where).
 *   3. startTemporalCluster(): one node running frontend, history, matching and worker from a config YAML written
 *      here (postgres12 plugin; SQL visibility on PostgreSQL is "advanced visibility", so custom search attributes
 *      work), on free ports; then creates the namespace and registers the search attributes.
 *   4. stop(): SIGTERM (the server drains and exits), SIGKILL after 20 s; optionally drops the two databases.
 *
 * Scaling out is not done here: more treewarden worker processes/hosts point TEMPORAL_ADDRESS at the frontend.
 * See docs: ../shared/docs/temporal-toolchain.md §2.6.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { dropDatabase } from './postgres';
import { freePortsInRange } from './ports';
import { registerSearchAttributes, type SearchAttributeTypeName } from '../../temporal/search-attributes';
import { killOnExit, lineReader, spawnOrphanWatchdog } from './child-processes';
import { goInstallBinaries } from './go-install';
import { withInstallLock } from './install-lock';
import { findOnPath, removeLeftovers, temporalCacheDir, type Log } from './temporal-cli';

/** Matches the server embedded in the pinned CLI v1.5.1; its go.mod has no replace directives (go install-able). */
export const TEMPORAL_SERVER_VERSION = '1.29.1';
const SERVER_MODULE = 'go.temporal.io/server';
const execFileAsync = promisify(execFile);
const defaultLog: Log = (line) => process.stderr.write(`[temporal-cluster] ${line}\n`);

export interface TemporalServerTools {
  server: string;
  sqlTool: string;
}

export function temporalServerToolPaths(): TemporalServerTools {
  const dir = temporalCacheDir();
  return { server: path.join(dir, 'temporal-server'), sqlTool: path.join(dir, 'temporal-sql-tool') };
}

/** Both binaries answer `--version` with the pinned version ("temporal version 1.29.1", "temporal-sql-tool version 1.29.1"). */
async function toolsOk(tools: TemporalServerTools): Promise<boolean> {
  const want = new RegExp(`version ${TEMPORAL_SERVER_VERSION.replace(/\./g, '\\.')}(\\s|$)`);
  const ok = (bin: string) =>
    execFileAsync(bin, ['--version'], { timeout: 15_000 }).then(({ stdout }) => want.test(stdout.trim()), () => false);
  return (await ok(tools.server)) && (await ok(tools.sqlTool));
}

/** Installs temporal-server and temporal-sql-tool (pinned) into the user cache with `go install`; needs `go`. */
export async function ensureTemporalServerTools(log: Log = defaultLog): Promise<TemporalServerTools> {
  const tools = temporalServerToolPaths();
  if (await toolsOk(tools)) return tools;
  const go = findOnPath('go');
  if (!go) throw new Error(`'go' is not on PATH: the cluster profile builds temporal-server v${TEMPORAL_SERVER_VERSION} with go install`);
  const dir = temporalCacheDir();
  await fs.promises.mkdir(dir, { recursive: true });
  // The CLI's lock: one go install at a time in this cache dir (and removeLeftovers() is only safe under it).
  await withInstallLock(path.join(dir, '.temporal-install.lock'), log, async () => {
    if (await toolsOk(tools)) return;
    removeLeftovers(dir, log);
    await goInstallBinaries({
      go,
      dir,
      what: `temporal-server + temporal-sql-tool ${TEMPORAL_SERVER_VERSION}`,
      packages: [`${SERVER_MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION}`, `${SERVER_MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`],
      // go names binaries after their package dirs
      outputs: { server: tools.server, sql: tools.sqlTool },
      log,
    });
  });
  if (!(await toolsOk(tools))) throw new Error(`${tools.server} / ${tools.sqlTool} do not report version ${TEMPORAL_SERVER_VERSION} after install`);
  log(`installed ${tools.server} and ${tools.sqlTool} (v${TEMPORAL_SERVER_VERSION})`);
  return tools;
}

/** `<module cache>/go.temporal.io/server@v1.29.1/schema`: `go mod download` is a no-op when go install already fetched it. */
export async function temporalSchemaRoot(): Promise<string> {
  const go = findOnPath('go');
  if (!go) throw new Error(`'go' is not on PATH: it locates the schema dirs of ${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}`);
  const { stdout } = await execFileAsync(go, ['mod', 'download', '-json', `${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}`], {
    cwd: os.tmpdir(), // outside any go.mod
    maxBuffer: 1 << 20,
  });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download printed no Dir for ${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}: ${stdout}`);
  return path.join(dir, 'schema');
}

/** Connection parameters of a `postgresql://user[:password]@host:port/…` URL. */
export interface PgTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

export function pgTarget(url: string): PgTarget {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 5432), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
}

export interface TemporalDatabases {
  persistence: string;
  visibility: string;
}

/** Creates both databases and brings them to the newest schema of v1.29.1 with temporal-sql-tool. */
export async function setupTemporalDatabases(sqlTool: string, pg: PgTarget, dbs: TemporalDatabases, log: Log = defaultLog): Promise<void> {
  const schemaRoot = await temporalSchemaRoot();
  for (const [db, kind] of [
    [dbs.persistence, 'temporal'],
    [dbs.visibility, 'visibility'],
  ] as const) {
    const base = ['--endpoint', pg.host, '--port', String(pg.port), '--user', pg.user, '--plugin', 'postgres12', '--db', db];
    // the password goes through the environment, not argv (SQL_PASSWORD is the flag's env var)
    const run = (...args: string[]) =>
      execFileAsync(sqlTool, [...base, ...args], { env: { ...process.env, SQL_PASSWORD: pg.password }, maxBuffer: 16 << 20 }).catch(
        (err: Error & { stdout?: string; stderr?: string }) => {
          throw new Error(`temporal-sql-tool --db ${db} ${args.join(' ')} failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
        },
      );
    await run('create-database');
    await run('setup-schema', '--version', '0.0'); // only the schema_version tables
    await run('update-schema', '--schema-dir', path.join(schemaRoot, 'postgresql', 'v12', kind, 'versioned'));
    log(`database ${db}: ${kind} schema set up (${path.join(schemaRoot, 'postgresql', 'v12', kind)})`);
  }
}

export interface ClusterPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/**
 * The smallest config for one node running every service. Everything else keeps the server's defaults; there is no
 * dynamic config file because the 1.29 defaults already enable Update and Update-with-Start, which treewarden needs.
 */
export function clusterConfigYaml(pg: PgTarget, dbs: TemporalDatabases, ports: ClusterPorts): string {
  const store = (db: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${JSON.stringify(db)}
        connectAddr: ${JSON.stringify(`${pg.host}:${pg.port}`)}
        connectProtocol: tcp
        user: ${JSON.stringify(pg.user)}
        password: ${JSON.stringify(pg.password)}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, extra = '') => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${extra}`;
  return `# written by scripts/provision/temporal-cluster.ts
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4 # permanent once the database is initialised
  datastores:
    default:${store(dbs.persistence, 20)}
    visibility:${store(dbs.visibility, 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
  frontend:${service(ports.frontend, ports.frontendMembership, `\n      httpPort: ${ports.frontendHttp}`)}
  history:${service(ports.history, ports.historyMembership)}
  matching:${service(ports.matching, ports.matchingMembership)}
  worker:${service(ports.worker, ports.workerMembership)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.frontend}
dcRedirectionPolicy:
  policy: noop
`;
}

export interface StartTemporalClusterOptions {
  /** admin URL of the PostgreSQL server (a role that may CREATE DATABASE) */
  pgAdminUrl: string;
  /** database names; both are created here and must not exist yet */
  databases: TemporalDatabases;
  /** the config file and the server log go here */
  dir: string;
  namespace?: string;
  searchAttributes: Record<string, SearchAttributeTypeName>;
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
  const log = opts.log ?? defaultLog;
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
    const [frontend, frontendHttp, frontendMembership, history, historyMembership, matching, matchingMembership, worker, workerMembership] =
      await freePortsInRange(9, 20_000, 32_767);
    const ports = { frontend, frontendHttp, frontendMembership, history, historyMembership, matching, matchingMembership, worker, workerMembership };
    await fs.promises.writeFile(path.join(opts.dir, 'cluster.yaml'), clusterConfigYaml(pg, opts.databases, ports));
    try {
      const cluster = await startOnce(tools.server, opts, namespace, `127.0.0.1:${frontend}`, logFile, dropDbs, log);
      log(`temporal-server ${TEMPORAL_SERVER_VERSION} (pid ${cluster.pid}) serving namespace ${namespace} at ${cluster.address}`);
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
    let lastError: unknown;
    for (;;) {
      if (gone()) throw new Error(`temporal-server exited during start-up (code ${child.exitCode}, signal ${child.signalCode})`);
      if (Date.now() > deadline) throw new Error(`temporal-server at ${address} not ready: ${String(lastError)}`);
      const connection = Connection.lazy({ address, connectTimeout: '2s' });
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
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${bin} ${args.join(' ')}\n--- server output (tail) ---\n${tail.join('\n')}`);
  }
  child.unref();
  for (const s of [child.stdout, child.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.();
  return { address, namespace, pid: child.pid!, logFile, stop };
}

const GRPC_ALREADY_EXISTS = 6;

/** Registers `namespace` (1 day retention) unless it exists, then waits until the frontend describes it. */
async function ensureNamespace(connection: Connection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
  await connection.workflowService.describeNamespace({ namespace });
}
