// Prisma's own schema engine (the Rust migration code, compiled to WebAssembly and published as
// @prisma/schema-engine-wasm) connected to PostgreSQL through @prisma/adapter-pg. This machine cannot
// download the native schema-engine binary; this is the same engine without the download.
// Used by schema-engine-shim.mjs (behind the Prisma CLI) and db.mjs (without it).
//
// adapter-pg 7.10.1 is not exercised upstream as a *migration* adapter and needs four workarounds,
// all in this file and marked "Workaround N": (1) the "char" column type, (2) executeScript() splitting
// on ";", (3) the temporary shadow database (dropped while still connected, and pointed at the main
// database when built from a URL), (4) a fixed shadowDatabaseUrl that is never emptied.
// Unsupported combination: bump prisma, @prisma/client, @prisma/adapter-pg, @prisma/driver-adapter-utils
// and @prisma/schema-engine-wasm together, pinned, and run test/prisma-toolchain.test.ts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory, ColumnTypeEnum } from '@prisma/driver-adapter-utils';

const require = createRequire(import.meta.url);

/** Directory of @prisma/schema-engine-wasm (its package.json is not exported, so go through an export). */
export const engineDir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));

async function loadSchemaEngineClass() {
  // The Rust panic hook reports through this global (the Prisma CLI installs the same one); without it
  // a panic surfaces as "Cannot read properties of undefined (reading 'set_message')".
  globalThis.PRISMA_WASM_PANIC_REGISTRY ??= {
    message: '',
    set_message(m) {
      this.message = `RuntimeError: ${m}`;
    },
  };
  // The package entry does `import * as wasm from "./schema_engine_bg.wasm"`, which Node 20 cannot
  // import, so instantiate the module by hand and hand it to the JS glue.
  const glue = await import(path.join(engineDir, 'schema_engine_bg.js'));
  const bytes = await fs.readFile(path.join(engineDir, 'schema_engine_bg.wasm'));
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  return glue.SchemaEngine;
}

/**
 * pg config with discrete fields, never `connectionString`.
 * Workaround 3b: adapter-pg's connectToShadowDb() derives the shadow config as `{ ...config, database }`,
 * and pg lets a connectionString override `database`: the "shadow" would be the main database.
 */
export function poolConfigFromUrl(url) {
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  const sslmode = u.searchParams.get('sslmode');
  return {
    host: decodeURIComponent(u.hostname),
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.slice(1)),
    // Prisma's `?schema=`: unqualified names in migration scripts must land there.
    ...(schema ? { options: `-c search_path="${schema}"` } : {}),
    ...(sslmode && sslmode !== 'disable' ? { ssl: { rejectUnauthorized: sslmode === 'verify-full' } } : {}),
  };
}

const quoteIdent = (name) => `"${name.replaceAll('"', '""')}"`;

async function withClient(cfg, fn) {
  const client = new pg.Client(cfg);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Workaround 1: adapter-pg has no column type for PostgreSQL's internal one-byte `"char"` (OID 18), which
 * the engine reads when describing a database (pg_constraint.contype, ...): "Column type 'char' could not
 * be deserialized from the database." The engine wants ColumnType Character there (plain Text makes it
 * panic on the first CHECK constraint), so relabel the field as text for adapter-pg and put Character
 * back in the result. The column indexes travel on the rows array, which queryRaw() returns as is.
 */
const CHAR_OID = 18;
const TEXT_OID = 25;
const CHAR_COLUMNS = Symbol('charColumns');
function mapCharColumns(queryable) {
  const performIO = queryable.performIO.bind(queryable);
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.performIO = async (query) => {
    const result = await performIO(query);
    const charColumns = [];
    result.fields.forEach((field, i) => {
      if (field.dataTypeID === CHAR_OID) {
        field.dataTypeID = TEXT_OID;
        charColumns.push(i);
      }
    });
    if (charColumns.length) result.rows[CHAR_COLUMNS] = charColumns;
    return result;
  };
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const i of result.rows[CHAR_COLUMNS] ?? []) result.columnTypes[i] = ColumnTypeEnum.Character;
    return result;
  };
  return queryable;
}

/**
 * Workaround 2: adapter-pg's executeScript() runs `script.split(";")` piece by piece, so a ";" in a comment,
 * a string or a $$ function body breaks a migration, and a failing statement leaves the earlier ones
 * applied. Like the native engine, send the whole script as one simple-protocol query: PostgreSQL runs it
 * as one implicit transaction.
 */
function fixAdapter(adapter) {
  mapCharColumns(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolationLevel) => mapCharColumns(await startTransaction(isolationLevel));
  adapter.executeScript = async (script) => {
    try {
      await adapter.underlyingDriver().query(script);
    } catch (error) {
      adapter.onError(error); // rethrows as the DriverAdapterError the engine understands
    }
  };
  return adapter;
}

// engine.free() does not close the adapter's pools; closePools() does.
const pools = new Set();
function adapterFactory(cfg, options) {
  const pool = new pg.Pool(cfg);
  pools.add(pool);
  const factory = new PrismaPg(pool, { ...options, disposeExternalPool: true });
  const connect = factory.connect.bind(factory);
  factory.connect = async () => fixAdapter(await connect());
  return factory;
}

export async function closePools() {
  await Promise.all([...pools].filter((p) => !p.ended).map((p) => p.end().catch(() => {})));
}

/** Drop every non-system schema and recreate an empty `public`. */
async function emptyDatabase(cfg) {
  await withClient(cfg, async (client) => {
    const { rows } = await client.query(
      `SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'`,
    );
    for (const { nspname } of rows) await client.query(`DROP SCHEMA ${quoteIdent(nspname)} CASCADE`);
    await client.query('CREATE SCHEMA public');
  });
}

function migrationAdapterFactory(url, shadowUrl) {
  const mainCfg = poolConfigFromUrl(url);
  const schema = new URL(url).searchParams.get('schema');
  const options = schema ? { schema } : {};
  const factory = adapterFactory(mainCfg, options);
  factory.connectToShadowDb = async () => {
    if (shadowUrl) {
      // Workaround 4: with a fixed shadow database (shadowDatabaseUrl) the engine
      // replays the migrations into it several times per command without emptying it in between
      // ("P3006 ... type "X" already exists"). Empty it on every use - never point it at real data.
      const shadowCfg = poolConfigFromUrl(shadowUrl);
      await emptyDatabase(shadowCfg);
      return adapterFactory(shadowCfg, options).connect();
    }
    // Workaround 3: adapter-pg's own version drops the temporary database before closing its pool
    // ("database ... is being accessed by other users") and leaves it behind. Close first, then drop.
    const name = `prisma_migrate_shadow_db_${globalThis.crypto.randomUUID()}`;
    const admin = (sql) => withClient(mainCfg, (client) => client.query(sql));
    await admin(`CREATE DATABASE ${quoteIdent(name)}`);
    const adapter = await adapterFactory({ ...mainCfg, database: name }, options).connect();
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await dispose(); // ends the shadow pool
      await admin(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    };
    return adapter;
  };
  return bindMigrationAwareSqlAdapterFactory(factory);
}

/**
 * A schema engine for `url`. It connects at once, so the database must exist (ensureDatabase).
 * schemaFiles: [{ path, content }] - only needed by commands that read schema.prisma.
 * When done: engine.free(), closePools(), then process.exit(): the engine arms a 10 s timer around its
 * advisory lock and never clears it, which would keep the process alive.
 */
export async function createSchemaEngine({ url, shadowUrl, schemaFiles, log = () => {} }) {
  const SchemaEngine = await loadSchemaEngineClass();
  const datamodels = schemaFiles?.map((f) => [f.path, f.content]);
  return SchemaEngine.new({ datamodels }, log, migrationAdapterFactory(url, shadowUrl));
}

/** CREATE DATABASE unless it exists (the wasm engine has no createDatabase). Returns the database name. */
export async function ensureDatabase(url) {
  const cfg = poolConfigFromUrl(url);
  await withClient({ ...cfg, database: 'postgres' }, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [cfg.database]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${quoteIdent(cfg.database)}`);
  });
  return cfg.database;
}

/** Connect to `url` and disconnect; throws pg's error (code 3D000: no such database, ECONNREFUSED, ...). */
export async function canConnect(url) {
  await withClient(poolConfigFromUrl(url), () => {});
}
