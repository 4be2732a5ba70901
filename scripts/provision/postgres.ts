/**
 * PostgreSQL for tests and local runs: find (or start) a server, create / clone / drop databases, apply
 * prisma/migrations through the Prisma CLI (offline, see scripts/prisma/).
 *
 * Test pattern: resolveTestPostgresAdminUrl() once, createMigratedTemplate() once (one `migrate deploy`), then
 * createDatabaseFromTemplate() per test file or suite (a file copy in PostgreSQL, milliseconds), dropDatabase()
 * afterwards, stop() at the end.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from './ports';

const REPO_ROOT = path.resolve(__dirname, '../..');
const LOCAL_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const execFileAsync = promisify(execFile);

export interface TestPostgres {
  /** URL of the server's `postgres` database, as a superuser (or a role with CREATEDB). */
  adminUrl: string;
  /** Stops the server when this process started it; a no-op otherwise. */
  stop: () => Promise<void>;
}

/** `url` with the password masked, for error messages. */
function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/** Only plain names: no quoting or URL-encoding surprises, and PostgreSQL's 63-byte limit. */
function assertDatabaseName(name: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid database name: ${JSON.stringify(name)}`);
}

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const selectOne = (url: string) => withClient(url, (c) => c.query('SELECT 1'));

/** URL of database `name` on the server of `adminUrl` (same credentials and parameters). */
export function databaseUrl(adminUrl: string, name: string): string {
  assertDatabaseName(name);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  assertDatabaseName(name);
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  return databaseUrl(adminUrl, name);
}

/** Drops `name` if it exists, disconnecting its sessions (WITH (FORCE), PostgreSQL 13+). */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  assertDatabaseName(name);
  await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

export interface PrismaRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `npx prisma <args>` in the repo root against `databaseUrl`; never throws on a non-zero exit.
 * SHADOW_DATABASE_URL is `shadowDatabaseUrl` or unset (an inherited one may belong to another server).
 */
export function runPrisma(args: string[], databaseUrl: string, shadowDatabaseUrl?: string): Promise<PrismaRun> {
  const env = { ...process.env, DATABASE_URL: databaseUrl, SHADOW_DATABASE_URL: shadowDatabaseUrl };
  if (shadowDatabaseUrl === undefined) delete env.SHADOW_DATABASE_URL;
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['prisma', ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}

/** Applies prisma/migrations to `url` (creating the database if missing) with `prisma migrate deploy`. */
export async function migrateDeploy(url: string): Promise<void> {
  const run = await runPrisma(['migrate', 'deploy'], url);
  if (run.code !== 0) {
    throw new Error(`prisma migrate deploy failed (exit ${run.code}) on ${redact(url)}:\n${run.stdout}${run.stderr}`);
  }
}

/** (Re)creates database `name` with all migrations applied, to clone with createDatabaseFromTemplate(). */
export async function createMigratedTemplate(adminUrl: string, name: string): Promise<string> {
  await dropDatabase(adminUrl, name);
  const url = await createDatabase(adminUrl, name);
  await migrateDeploy(url);
  return url;
}

/** New database `name` as a copy of `template` (which must have no open connections). Returns its URL. */
export async function createDatabaseFromTemplate(adminUrl: string, name: string, template: string): Promise<string> {
  assertDatabaseName(name);
  assertDatabaseName(template);
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return databaseUrl(adminUrl, name);
}

/**
 * The PostgreSQL server for tests, first that works:
 * 1. DATABASE_URL (its server's `postgres` database is the admin URL);
 * 2. postgres@127.0.0.1:5432 with trust auth (the dev machine's server);
 * 3. a throwaway cluster from Debian's postgresql packages (installed if missing), removed by stop().
 */
export async function resolveTestPostgresAdminUrl(): Promise<TestPostgres> {
  const noop = async () => {};
  if (process.env.DATABASE_URL) {
    const adminUrl = databaseUrl(process.env.DATABASE_URL, 'postgres');
    await selectOne(adminUrl).catch((e: Error) => {
      throw new Error(`DATABASE_URL is set, but ${redact(adminUrl)} does not answer: ${e.message}`);
    });
    return { adminUrl, stop: noop };
  }
  if (await selectOne(LOCAL_ADMIN_URL).then(() => true, () => false)) return { adminUrl: LOCAL_ADMIN_URL, stop: noop };
  try {
    return await startThrowawayCluster();
  } catch (e) {
    throw new Error(
      'No PostgreSQL for tests: DATABASE_URL is not set, nothing answers as postgres@127.0.0.1:5432, and a ' +
        `throwaway cluster could not be started:\n${(e as Error).message}\n` +
        'Set DATABASE_URL to a server where this user may CREATE DATABASE, or install PostgreSQL (apt-get install postgresql).',
    );
  }
}

const bash = (script: string) => execFileAsync('bash', ['-c', script], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });

/** Newest /usr/lib/postgresql/<version>/bin, installing Debian's postgresql package when there is none. */
async function postgresBinDir(): Promise<string> {
  const find = async () => (await bash('ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1')).stdout.trim();
  const found = await find();
  if (found) return found;
  await bash('apt-get install -y postgresql || (apt-get update && apt-get install -y postgresql)');
  const installed = await find();
  if (!installed) throw new Error('apt-get install postgresql left no /usr/lib/postgresql/*/bin');
  return installed;
}

async function startThrowawayCluster(): Promise<TestPostgres> {
  const bin = await postgresBinDir();
  // initdb and postgres refuse to run as root: run them as the `postgres` user the Debian package creates.
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, ...args: string[]) =>
    asRoot ? execFileAsync('runuser', ['-u', 'postgres', '--', cmd, ...args]) : execFileAsync(cmd, args);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'treewarden-pg-'));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'log');
  const removeDir = () => fs.rm(dir, { recursive: true, force: true });
  try {
    if (asRoot) await execFileAsync('chown', ['postgres:postgres', dir]);
    await run(path.join(bin, 'initdb'), '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync');
    // freePort() cannot reserve the port; a lost race shows up as a failed start, so retry with another.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        // -k: the Unix socket in our dir (the default /var/run/postgresql may not exist or be taken).
        // fsync=off: crash safety is worthless for a throwaway cluster and fsync dominates test DDL time.
        const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off`;
        await run(path.join(bin, 'pg_ctl'), '-D', data, '-l', logFile, '-o', options, '-w', 'start');
      } catch (e) {
        if (attempt < 3) continue;
        const log = await fs.readFile(logFile, 'utf8').catch(() => '');
        throw new Error(`pg_ctl start failed: ${(e as Error).message}\n${log}`);
      }
      const stop = async () => {
        // immediate: no shutdown checkpoint, the data is thrown away anyway
        await run(path.join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop').catch(() => {});
        await removeDir();
      };
      return { adminUrl: `postgresql://postgres@127.0.0.1:${port}/postgres`, stop };
    }
  } catch (e) {
    await removeDir();
    throw e;
  }
}

export interface EmbeddedPglite {
  url: string;
  /** For SHADOW_DATABASE_URL (`prisma migrate dev`); emptied on every use. */
  shadowUrl: string;
  stop: () => Promise<void>;
}

/**
 * Starts scripts/prisma/pglite-server.mjs (PGlite persisted in `dataDir`, served on 127.0.0.1:`port`, in-memory
 * shadow on `port`+1) and waits for its ready line.
 */
export function startEmbeddedPglite(dataDir: string, port: number): Promise<EmbeddedPglite> {
  const script = path.join(REPO_ROOT, 'scripts/prisma/pglite-server.mjs');
  const child = spawn(process.execPath, [script, dataDir, String(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM'); // the server closes PGlite, which flushes the data dir
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d).slice(-10_000)));
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop();
      reject(new Error(`pglite-server ${why}\n${stderr}`));
    };
    const timer = setTimeout(() => fail('not ready after 60 s'), 60_000);
    child.once('error', (e) => fail(`failed to start: ${e.message}`));
    child.once('exit', (code, signal) => fail(`exited before ready (${signal ?? code})`));
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      let ready: { ready?: boolean; url: string; shadowUrl: string } | undefined;
      try {
        ready = JSON.parse(line);
      } catch {
        // reported below
      }
      if (!ready?.ready) return fail(`printed an unexpected first line: ${line}`);
      settled = true;
      clearTimeout(timer);
      resolve({ url: ready.url, shadowUrl: ready.shadowUrl, stop });
    });
  });
}
