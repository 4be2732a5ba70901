/** Cleanup shared by global-setup.ts (failed setup, stale runs) and global-teardown.ts. */
import fs from 'node:fs';
import path from 'node:path';
import type { DevServer } from '../scripts/provision/temporal-dev-server';
import { isAlive } from '../processes/process-table';
import { TMP_DIR, type StackInfo } from './stack';

type Log = (line: string) => void;

/** What globalSetup hands to globalTeardown (same process) through globalThis. */
export interface GlobalStackState {
  info?: StackInfo;
  stackFile: string;
  server?: DevServer;
  /** stops a throwaway PostgreSQL cluster when the run had to start one */
  stopPostgres?: () => Promise<void>;
}

declare global {
  var __TREEWARDEN_TEST_STACK__: GlobalStackState | undefined;
}

export const log: Log = (line) => {
  process.stderr.write(`[test-stack] ${line}\n`);
};

/** Drops the run's cloned databases (from the track file) and its template. Missing databases are fine. */
export async function dropRunDatabases(info: StackInfo, log: Log): Promise<void> {
  if (!info.pgAdminUrl || !info.templateDb) return; // run without PG (TREEWARDEN_TEST_NO_PG=1)
  let tracked: string[] = [];
  try {
    tracked = fs.readFileSync(info.dbTrackFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    // no database was cloned
  }
  const names = [...new Set(tracked)].filter((n) => /^tw_test_\w+$/.test(n));
  const { dropDatabase } = await import('../scripts/provision/postgres');
  const failures: string[] = [];
  // Clones first, the template last (CREATE DATABASE … TEMPLATE needs it idle, DROP needs it unused).
  for (const name of [...names, info.templateDb]) {
    try {
      await dropDatabase(info.pgAdminUrl, name);
    } catch (err) {
      failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (names.length) log(`dropped ${names.length} test database(s) and template ${info.templateDb}`);
  fs.rmSync(info.dbTrackFile, { force: true });
  if (failures.length) throw new Error(`could not drop test databases:\n${failures.join('\n')}`);
}

/** Full teardown of one run: databases, dev server, stack file. Collects errors and throws once at the end. */
export async function teardownStack(state: GlobalStackState, log: Log): Promise<void> {
  const results = await Promise.allSettled([
    (async () => {
      try {
        if (state.info) await dropRunDatabases(state.info, log);
      } finally {
        await state.stopPostgres?.(); // even when a drop failed: a throwaway cluster must not outlive the run
      }
    })(),
    state.server ? state.server.stop() : Promise.resolve(),
  ]);
  fs.rmSync(state.stackFile, { force: true });
  if (state.info?.workflowBundleFile) fs.rmSync(state.info.workflowBundleFile, { force: true });
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length) {
    throw new Error(
      `test stack teardown failed:\n${errors.map((e) => (e instanceof Error ? e.message : String(e))).join('\n')}`,
    );
  }
}

/**
 * Drops the databases of earlier runs whose jest process is gone (crash, SIGKILL, Ctrl-C before teardown).
 * Their dev servers were already killed by the watchdog in startDevServer().
 */
export async function reapStaleRuns(log: Log): Promise<void> {
  let entries: string[];
  try {
    entries = fs.readdirSync(TMP_DIR);
  } catch {
    return;
  }
  for (const entry of entries) {
    const m = /^test-stack-(\d+)\.json$/.exec(entry);
    if (!m || Number(m[1]) === process.pid) continue;
    const file = path.join(TMP_DIR, entry);
    let info: StackInfo;
    try {
      info = JSON.parse(fs.readFileSync(file, 'utf8')) as StackInfo;
    } catch {
      continue;
    }
    if (isAlive(info.jestPid)) continue; // a concurrent run
    log(`reaping stale test run ${info.runId}`);
    try {
      await teardownStack({ info, stackFile: file }, log);
    } catch (err) {
      log(`could not fully reap ${info.runId}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
