#!/usr/bin/env node
// Fallback for when the Prisma CLI + schema-engine-shim.mjs break (e.g. after an upgrade): the same wasm
// schema engine, driven directly, no CLI protocol involved. Same _prisma_migrations table and checksums.
//   DATABASE_URL=... node scripts/prisma/db.mjs deploy   apply pending prisma/migrations (= prisma migrate deploy)
//   DATABASE_URL=... node scripts/prisma/db.mjs status   exit 1 unless up to date (= prisma migrate status)
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closePools, createSchemaEngine, ensureDatabase } from './wasm-engine.mjs';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));
const FILTERS = { externalTables: [], externalEnums: [] };

/** The migrations folder in the shape the engine expects (what the Prisma CLI builds and sends). */
async function readMigrationsList(baseDir) {
  const lockfile = 'migration_lock.toml';
  const entries = await fs.readdir(baseDir, { withFileTypes: true });
  const migrationDirectories = await Promise.all(
    entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort()
      .map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: await fs.readFile(path.join(baseDir, name, 'migration.sql'), 'utf8').then(
            (value) => ({ tag: 'ok', value }),
            (err) => ({ tag: 'error', value: err.message }),
          ),
        },
      })),
  );
  const lockContent = await fs.readFile(path.join(baseDir, lockfile), 'utf8').catch(() => null);
  return { baseDir, lockfile: { path: lockfile, content: lockContent }, shadowDbInitScript: '', migrationDirectories };
}

const [command] = process.argv.slice(2);
const url = process.env.DATABASE_URL;
if (!url || !['deploy', 'status'].includes(command)) {
  console.error('usage: DATABASE_URL=... node scripts/prisma/db.mjs deploy|status');
  process.exit(2);
}

let engine;
try {
  if (command === 'deploy') await ensureDatabase(url);
  engine = await createSchemaEngine({ url });
  const migrationsList = await readMigrationsList(MIGRATIONS_DIR);
  if (command === 'deploy') {
    const { appliedMigrationNames: applied } = await engine.applyMigrations({ migrationsList, filters: FILTERS });
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'no pending migrations');
  } else {
    const d = await engine.diagnoseMigrationHistory({ migrationsList, optInToShadowDatabase: false, filters: FILTERS });
    const problems = [
      d.history && `history: ${JSON.stringify(d.history)}`,
      d.failedMigrationNames.length && `failed: ${d.failedMigrationNames.join(', ')}`,
      d.editedMigrationNames.length && `edited: ${d.editedMigrationNames.join(', ')}`,
    ].filter(Boolean);
    console.log(problems.length ? problems.join('\n') : 'database schema is up to date');
    process.exitCode = problems.length ? 1 : 0;
  }
} catch (e) {
  const panic = globalThis.PRISMA_WASM_PANIC_REGISTRY?.message;
  console.error(`${command} failed: ${[e?.code, panic || e?.message || e].filter(Boolean).join(' ')}`);
  if (e?.meta) console.error(JSON.stringify(e.meta));
  process.exitCode = 1;
} finally {
  engine?.free();
  await closePools();
  process.exit(process.exitCode ?? 0); // see createSchemaEngine: the engine leaves a 10 s timer armed
}
