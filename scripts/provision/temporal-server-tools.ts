/**
 * The cluster profile's binaries and databases: `temporal-server` and `temporal-sql-tool` installed with `go install`
 * into the CLI's user cache (same install lock, staging and atomic rename), and the persistence and visibility
 * databases brought to the pinned schema with temporal-sql-tool (temporal-cluster.ts runs the server on them).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { goInstallBinaries } from './go-install';
import { withInstallLock } from './install-lock';
import { findOnPath, removeLeftovers, temporalCacheDir, type Log } from './temporal-cli';

/** Matches the server embedded in the pinned CLI v1.5.1; its go.mod has no replace directives (go install-able). */
export const TEMPORAL_SERVER_VERSION = '1.29.1';
const SERVER_MODULE = 'go.temporal.io/server';
const execFileAsync = promisify(execFile);
export const clusterLog: Log = (line) => process.stderr.write(`[temporal-cluster] ${line}\n`);

export interface TemporalServerTools {
  server: string;
  sqlTool: string;
}

export function temporalServerToolPaths(): TemporalServerTools {
  const dir = temporalCacheDir();
  return { server: path.join(dir, 'temporal-server'), sqlTool: path.join(dir, 'temporal-sql-tool') };
}

/**
 * Both binaries answer `--version` with the pinned version ("temporal version 1.29.1",
 * "temporal-sql-tool version 1.29.1").
 */
async function toolsOk(tools: TemporalServerTools): Promise<boolean> {
  const want = new RegExp(`version ${TEMPORAL_SERVER_VERSION.replace(/\./g, '\\.')}(\\s|$)`);
  const ok = (bin: string) =>
    execFileAsync(bin, ['--version'], { timeout: 15_000 }).then(
      ({ stdout }) => want.test(stdout.trim()),
      () => false,
    );
  return (await ok(tools.server)) && (await ok(tools.sqlTool));
}

/** Installs temporal-server and temporal-sql-tool (pinned) into the user cache with `go install`; needs `go`. */
export async function ensureTemporalServerTools(log: Log = clusterLog): Promise<TemporalServerTools> {
  const tools = temporalServerToolPaths();
  if (await toolsOk(tools)) return tools;
  const go = findOnPath('go');
  if (!go)
    throw new Error(
      `'go' is not on PATH: the cluster profile builds temporal-server v${TEMPORAL_SERVER_VERSION} with go install`,
    );
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
      packages: [
        `${SERVER_MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
        `${SERVER_MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
      ],
      // go names binaries after their package dirs
      outputs: { server: tools.server, sql: tools.sqlTool },
      log,
    });
  });
  if (!(await toolsOk(tools)))
    throw new Error(
      `${tools.server} / ${tools.sqlTool} do not report version ${TEMPORAL_SERVER_VERSION} after install`,
    );
  log(`installed ${tools.server} and ${tools.sqlTool} (v${TEMPORAL_SERVER_VERSION})`);
  return tools;
}

/**
 * `<module cache>/go.temporal.io/server@v1.29.1/schema`: `go mod download` is a no-op when go install
 * already fetched it.
 */
export async function temporalSchemaRoot(): Promise<string> {
  const go = findOnPath('go');
  if (!go)
    throw new Error(`'go' is not on PATH: it locates the schema dirs of ${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}`);
  const { stdout } = await execFileAsync(
    go,
    ['mod', 'download', '-json', `${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}`],
    {
      cwd: os.tmpdir(), // outside any go.mod
      maxBuffer: 1 << 20,
    },
  );
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir)
    throw new Error(`go mod download printed no Dir for ${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}: ${stdout}`);
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
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

export interface TemporalDatabases {
  persistence: string;
  visibility: string;
}

/** Creates both databases and brings them to the newest schema of v1.29.1 with temporal-sql-tool. */
export async function setupTemporalDatabases(
  sqlTool: string,
  pg: PgTarget,
  dbs: TemporalDatabases,
  log: Log = clusterLog,
): Promise<void> {
  const schemaRoot = await temporalSchemaRoot();
  for (const [db, kind] of [
    [dbs.persistence, 'temporal'],
    [dbs.visibility, 'visibility'],
  ] as const) {
    const base = [
      '--endpoint',
      pg.host,
      '--port',
      String(pg.port),
      '--user',
      pg.user,
      '--plugin',
      'postgres12',
      '--db',
      db,
    ];
    // the password goes through the environment, not argv (SQL_PASSWORD is the flag's env var)
    const run = (...args: string[]) =>
      execFileAsync(sqlTool, [...base, ...args], {
        env: { ...process.env, SQL_PASSWORD: pg.password },
        maxBuffer: 16 << 20,
      }).catch((err: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(
          `temporal-sql-tool --db ${db} ${args.join(' ')} failed: ${err.message}\n` +
            `${err.stdout ?? ''}${err.stderr ?? ''}`,
        );
      });
    await run('create-database');
    await run('setup-schema', '--version', '0.0'); // only the schema_version tables
    await run('update-schema', '--schema-dir', path.join(schemaRoot, 'postgresql', 'v12', kind, 'versioned'));
    log(`database ${db}: ${kind} schema set up (${path.join(schemaRoot, 'postgresql', 'v12', kind)})`);
  }
}
