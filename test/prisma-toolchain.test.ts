/**
 * Smoke test of the offline Prisma toolchain: the unmodified Prisma CLI, made to work without its native
 * schema engine by prisma.config.ts + scripts/prisma/ (Prisma's wasm schema engine over @prisma/adapter-pg),
 * against throwaway databases. It is the upgrade gate for prisma / @prisma/* and pins the four adapter-pg
 * workarounds in scripts/prisma/wasm-engine.mjs. Uses the test run's PostgreSQL server (testing/global-setup.ts).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Client } from 'pg';
import {
  createDatabase,
  createDatabaseFromTemplate,
  createMigratedTemplate,
  dropDatabase,
  migrateDeploy,
  runPrisma,
} from '../scripts/provision/postgres';
import { testStack } from '../testing/stack';

const ROOT = path.resolve(__dirname, '..');
const RUN = `${process.pid}_${randomBytes(3).toString('hex')}`;
const SCRATCH = path.join(ROOT, '.tmp', `prisma-toolchain-${RUN}`); // .tmp/ is git-ignored

let server: { adminUrl: string } | undefined;
const created: string[] = [];

/** A new empty database, dropped in afterAll. */
async function scratchDatabase(label: string): Promise<string> {
  const name = `tw_test_toolchain_${label}_${RUN}`;
  created.push(name);
  return createDatabase(server!.adminUrl, name);
}

async function sql<T extends object>(url: string, text: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

const output = (run: { stdout: string; stderr: string }) => `${run.stdout}\n${run.stderr}`;

beforeAll(async () => {
  server = { adminUrl: testStack().pgAdminUrl }; // the run's embedded (or DATABASE_URL) server
  await fs.mkdir(SCRATCH, { recursive: true });
});

afterAll(async () => {
  if (server) for (const name of created) await dropDatabase(server.adminUrl, name);
  await fs.rm(SCRATCH, { recursive: true, force: true });
});

test('prisma validate', async () => {
  const run = await runPrisma(['validate'], server!.adminUrl);
  expect(output(run)).toContain('is valid');
  expect(run.code).toBe(0);
});

test('prisma generate (into a scratch copy, not generated/ which other tests import)', async () => {
  const schema = path.join(SCRATCH, 'generate', 'prisma', 'schema.prisma');
  await fs.mkdir(path.dirname(schema), { recursive: true });
  await fs.copyFile(path.join(ROOT, 'prisma/schema.prisma'), schema);
  const run = await runPrisma(['generate', '--schema', schema], server!.adminUrl);
  expect(run.code).toBe(0);
  // output = "../generated/prisma", relative to the schema
  await expect(fs.stat(path.join(SCRATCH, 'generate', 'generated/prisma/client.ts'))).resolves.toBeTruthy();
});

test('migrate deploy on a fresh database, then migrate status is up to date', async () => {
  const url = await scratchDatabase('deploy');
  await migrateDeploy(url);

  const migrations = (await fs.readdir(path.join(ROOT, 'prisma/migrations'), { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const rows = await sql<{ migration_name: string; finished: boolean }>(
    url,
    'SELECT migration_name, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name',
  );
  expect(rows).toEqual(migrations.map((migration_name) => ({ migration_name, finished: true })));

  const status = await runPrisma(['migrate', 'status'], url);
  expect(output(status)).toContain('Database schema is up to date!');
  expect(status.code).toBe(0);
});

test('migrate diff: replaying prisma/migrations gives exactly prisma/schema.prisma', async () => {
  const url = await scratchDatabase('diff');
  const run = await runPrisma(
    ['migrate', 'diff', '--from-migrations', 'prisma/migrations', '--to-schema', 'prisma/schema.prisma', '--exit-code'],
    url,
  );
  expect(output(run)).toContain('No difference detected');
  expect(run.code).toBe(0);
  // adapter-pg workaround 3: the replay ran in a temporary shadow database, which is gone, ...
  const leftovers = await sql(
    server!.adminUrl,
    "SELECT 1 FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'",
  );
  expect(leftovers).toEqual([]);
  // ... and was not the main database (3b).
  expect(await sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual([]);
});

test('a fixed shadow database (SHADOW_DATABASE_URL) is emptied before use', async () => {
  const url = await scratchDatabase('main');
  const shadowUrl = await scratchDatabase('shadow');
  // Leftovers of an earlier replay (adapter-pg workaround 4): without the wipe, "relation already exists".
  await sql(shadowUrl, 'CREATE TABLE "_prisma_migrations" (id INT); CREATE TABLE "Company" (id INT)');
  const run = await runPrisma(
    ['migrate', 'diff', '--from-migrations', 'prisma/migrations', '--to-schema', 'prisma/schema.prisma', '--exit-code'],
    url,
    shadowUrl,
  );
  expect(output(run)).toContain('No difference detected');
  expect(run.code).toBe(0);
});

test('a migrated template clones into an up-to-date database', async () => {
  const template = `tw_test_toolchain_tpl_${RUN}`;
  created.push(template);
  await createMigratedTemplate(server!.adminUrl, template);
  const clone = `tw_test_toolchain_clone_${RUN}`;
  created.push(clone);
  const url = await createDatabaseFromTemplate(server!.adminUrl, clone, template);
  const status = await runPrisma(['migrate', 'status'], url);
  expect(output(status)).toContain('Database schema is up to date!');
});

// adapter-pg workaround 2: the engine must send a migration script whole, not split on ";".
test('a migration runs as one script: ";" inside comments and strings is fine, a failure rolls it all back', async () => {
  // A copy of prisma/migrations plus two migrations, used through a config that extends the real one.
  const migrationsDir = path.join(SCRATCH, 'atomic', 'migrations');
  await fs.cp(path.join(ROOT, 'prisma/migrations'), migrationsDir, { recursive: true });
  const addMigration = async (name: string, script: string) => {
    await fs.mkdir(path.join(migrationsDir, name));
    await fs.writeFile(path.join(migrationsDir, name, 'migration.sql'), script);
  };
  await addMigration(
    '99990101000000_semicolons',
    `-- comment; with semicolon\nCREATE TABLE "toolchain_probe" ("v" TEXT);\nINSERT INTO "toolchain_probe" VALUES ('a;b');\n`,
  );
  await addMigration(
    '99990101000001_fails',
    `ALTER TABLE "toolchain_probe" ADD COLUMN "added" INT;\n-- fails after the ALTER; nothing may remain\nSELECT 1/0;\n`,
  );
  const config = path.join(SCRATCH, 'atomic', 'prisma.config.ts');
  await fs.writeFile(
    config,
    `import base from ${JSON.stringify(path.join(ROOT, 'prisma.config'))};\n` +
      // relative paths in a config are resolved against its own directory
      `export default { ...base, schema: ${JSON.stringify(path.join(ROOT, 'prisma/schema.prisma'))}, ` +
      `migrations: { ...base.migrations, path: ${JSON.stringify(migrationsDir)} } };\n`,
  );

  const url = await scratchDatabase('atomic');
  const run = await runPrisma(['migrate', 'deploy', '--config', config], url);
  expect(output(run)).toContain('division by zero');
  expect(run.code).not.toBe(0);

  expect(await sql(url, 'SELECT "v" FROM "toolchain_probe"')).toEqual([{ v: 'a;b' }]);
  const columns = await sql(
    url,
    "SELECT column_name FROM information_schema.columns WHERE table_name = 'toolchain_probe'",
  );
  expect(columns).toEqual([{ column_name: 'v' }]); // the ALTER before the failing statement was rolled back
  const history = await sql(
    url,
    "SELECT migration_name, finished_at IS NOT NULL AS finished FROM _prisma_migrations WHERE migration_name LIKE '9999%' ORDER BY 1",
  );
  expect(history).toEqual([
    { migration_name: '99990101000000_semicolons', finished: true },
    { migration_name: '99990101000001_fails', finished: false },
  ]);
});
