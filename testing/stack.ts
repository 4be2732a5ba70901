/**
 * The test stack provisioned once per jest run by global-setup.ts: one Temporal dev server and one migrated
 * PostgreSQL template database. Test files read it with testStack() and clone the template with freshDatabase().
 *
 * Hand-off: globalSetup sets process.env (jest 30 forks its workers after globalSetup, so they inherit it) and also
 * writes the same info to a per-run JSON file (`.tmp/test-stack-<jest pid>.json`, path in
 * TREEWARDEN_TEST_STACK_FILE) that globalTeardown uses. Databases created by freshDatabase() are appended to
 * `<stack file>.dbs` so that teardown can drop whatever a crashed test left behind.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '@temporalio/worker';

export interface StackInfo {
  /** jest main-process pid + random: unique per run, used in database names. */
  runId: string;
  /** pid of the jest main process (globalSetup/globalTeardown); lets a later run reap this one if it crashed. */
  jestPid: number;
  temporalAddress: string;
  /** the dev server's Web UI */
  temporalUiUrl?: string;
  namespace: string;
  /** pid of the dev server we started; absent when reusing an external server. */
  temporalPid?: number;
  /** Absent only when TREEWARDEN_TEST_NO_PG=1. */
  pgAdminUrl?: string;
  templateDb?: string;
  /** Append-only list (one name a line) of databases cloned during this run. */
  dbTrackFile: string;
  /** The workflow bundle, built once per run (bundling takes seconds; every file's workers load this one). */
  workflowBundleFile?: string;
}

export interface TestStack {
  temporalAddress: string;
  namespace: string;
  pgAdminUrl: string;
  templateDb: string;
}

export const STACK_ENV = {
  file: 'TREEWARDEN_TEST_STACK_FILE',
  runId: 'TREEWARDEN_TEST_RUN_ID',
  temporalAddress: 'TREEWARDEN_TEST_TEMPORAL_ADDRESS',
  temporalUiUrl: 'TREEWARDEN_TEST_TEMPORAL_UI_URL',
  namespace: 'TREEWARDEN_TEST_TEMPORAL_NAMESPACE',
  pgAdminUrl: 'TREEWARDEN_TEST_PG_ADMIN_URL',
  templateDb: 'TREEWARDEN_TEST_TEMPLATE_DB',
  workflowBundleFile: 'TREEWARDEN_TEST_WORKFLOW_BUNDLE',
} as const;

/** For bundling in tests: webpack's progress is noise there, its errors are not. */
const silent = () => {};
export const QUIET_BUNDLER_LOG: Logger = {
  log: silent,
  trace: silent,
  debug: silent,
  info: silent,
  warn: silent,
  error: console.error,
};

export const REPO_ROOT = path.resolve(__dirname, '..');
export const TMP_DIR = path.join(REPO_ROOT, '.tmp');

export function stackFilePath(jestPid: number = process.pid): string {
  return path.join(TMP_DIR, `test-stack-${jestPid}.json`);
}

/** Called by globalSetup: publish the stack to this process's env (inherited by workers) and to the stack file. */
export function publishStack(info: StackInfo, file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(info, null, 2)}\n`);
  process.env[STACK_ENV.file] = file;
  process.env[STACK_ENV.runId] = info.runId;
  process.env[STACK_ENV.temporalAddress] = info.temporalAddress;
  process.env[STACK_ENV.namespace] = info.namespace;
  if (info.temporalUiUrl) process.env[STACK_ENV.temporalUiUrl] = info.temporalUiUrl;
  if (info.pgAdminUrl) process.env[STACK_ENV.pgAdminUrl] = info.pgAdminUrl;
  if (info.templateDb) process.env[STACK_ENV.templateDb] = info.templateDb;
  if (info.workflowBundleFile) process.env[STACK_ENV.workflowBundleFile] = info.workflowBundleFile;
}

/** The run's workflow bundle file (global-setup.ts), when this process runs under that setup. */
export function sharedWorkflowBundleFile(): string | undefined {
  const file = process.env[STACK_ENV.workflowBundleFile];
  return file && fs.existsSync(file) ? file : undefined;
}

/** Called by globalTeardown. */
export function unpublishStack(): void {
  for (const name of Object.values(STACK_ENV)) delete process.env[name];
}

function readStackFile(): StackInfo | undefined {
  const file = process.env[STACK_ENV.file];
  if (!file || !fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as StackInfo;
}

function notProvisioned(what: string): Error {
  return new Error(
    `${what} is not set: the test stack is provisioned by jest globalSetup (testing/global-setup.ts); ` +
      'run the tests with jest (npx jest / npm test)',
  );
}

/** Temporal part of the stack only. */
export function testTemporal(): { temporalAddress: string; namespace: string } {
  const temporalAddress = process.env[STACK_ENV.temporalAddress] ?? readStackFile()?.temporalAddress;
  const namespace = process.env[STACK_ENV.namespace] ?? readStackFile()?.namespace ?? 'default';
  if (!temporalAddress) throw notProvisioned(STACK_ENV.temporalAddress);
  return { temporalAddress, namespace };
}

/** The dev server's Web UI (test/temporal-ui.test.ts). */
export function testTemporalUiUrl(): string {
  const url = process.env[STACK_ENV.temporalUiUrl] ?? readStackFile()?.temporalUiUrl;
  if (!url) throw notProvisioned(STACK_ENV.temporalUiUrl);
  return url;
}

export function testStack(): TestStack {
  const file = readStackFile();
  const { temporalAddress, namespace } = testTemporal();
  const pgAdminUrl = process.env[STACK_ENV.pgAdminUrl] ?? file?.pgAdminUrl;
  const templateDb = process.env[STACK_ENV.templateDb] ?? file?.templateDb;
  if (!pgAdminUrl) throw notProvisioned(STACK_ENV.pgAdminUrl);
  if (!templateDb) throw notProvisioned(STACK_ENV.templateDb);
  return { temporalAddress, namespace, pgAdminUrl, templateDb };
}

/** Append-only tracking file of databases cloned in this run (next to the stack file). */
export function dbTrackFile(stackFile: string): string {
  return `${stackFile}.dbs`;
}

/**
 * A new database cloned from the run's migrated template (fast: CREATE DATABASE … TEMPLATE). Call drop() when done;
 * whatever is not dropped is dropped by globalTeardown.
 */
export async function freshDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const { pgAdminUrl, templateDb } = testStack();
  // Loaded lazily so Temporal-only test files don't load the PG tooling.
  const { createDatabaseFromTemplate, databaseUrl, dropDatabase } = await import('../scripts/provision/postgres');
  const runId = process.env[STACK_ENV.runId] ?? readStackFile()?.runId ?? String(process.pid);
  const name = `tw_test_${runId}_${randomBytes(4).toString('hex')}`;
  const stackFile = process.env[STACK_ENV.file];
  // Track before creating, so a crash between the two still gets cleaned up (dropping a missing db is a no-op).
  if (stackFile) fs.appendFileSync(dbTrackFile(stackFile), `${name}\n`);
  await createDatabaseFromTemplate(pgAdminUrl, name, templateDb);
  let dropped = false;
  return {
    name,
    url: databaseUrl(pgAdminUrl, name),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await dropDatabase(pgAdminUrl, name);
    },
  };
}
