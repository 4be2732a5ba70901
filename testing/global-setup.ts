/**
 * jest globalSetup: provision ONE test stack for the whole run (see stack.ts for how tests reach it):
 *   - the pinned Temporal CLI (installed into the user cache on first use: the SDK's download, seconds, else
 *     go install, 5-10 min cold; scripts/provision/temporal-cli.ts),
 *   - an in-memory `temporal server start-dev` on free ports (Web UI included, for test/temporal-ui.test.ts) with
 *     treewarden's search attributes and `limit.historyCount.suggestContinueAsNew=200` (so continue-as-new is
 *     exercised by tests),
 *   - headless Chromium for the browser tests (inflated from the `@sparticuz/chromium` npm package on first use),
 *   - a migrated PostgreSQL template database `tw_test_tpl_<pid>_<random>` that freshDatabase() clones,
 *   - the workflow bundle, built once (`.tmp/workflow-bundle-<run>.js`) instead of once per test file.
 * Runs in the jest main process; globalTeardown (same process) reads the state from globalThis.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { bundleWorkflows } from '../workers/workflow-code';
import { ensureChromium } from '../scripts/provision/chromium';
import { startDevServer, type DevServer } from '../scripts/provision/temporal-dev-server';
import { log, reapStaleRuns, teardownStack } from './reap';
import { publishStack, stackFilePath, dbTrackFile, QUIET_BUNDLER_LOG, TMP_DIR, type StackInfo } from './stack';

export default async function globalSetup(): Promise<void> {
  const t0 = Date.now();
  const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const stackFile = stackFilePath();
  await reapStaleRuns(log);

  let server: DevServer | undefined;
  try {
    server = await startDevServer({
      searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES },
      dynamicConfig: {
        'limit.historyCount.suggestContinueAsNew': 200,
        // one partition per task queue: the server orders a backlog fairly within a partition, and the fairness
        // tests assert that order (with four, a task's rank also depends on which partition a poll drains first)
        'matching.numTaskqueueReadPartitions': 1,
        'matching.numTaskqueueWritePartitions': 1,
        // every test file's workers are a worker deployment of their own (testing/harness.ts); the default is 100
        'matching.maxDeployments': 10_000,
      },
      log,
    });
    log(`temporal dev server pid ${server.pid} at ${server.address} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);

    const info: StackInfo = {
      runId,
      jestPid: process.pid,
      temporalAddress: server.address,
      temporalUiUrl: server.uiUrl,
      namespace: server.namespace,
      temporalPid: server.pid,
      dbTrackFile: dbTrackFile(stackFile),
    };
    globalThis.__TREEWARDEN_TEST_STACK__ = { info, stackFile, server };
    publishStack(info, stackFile);
    await ensureChromium(log);
    const t2 = Date.now();
    info.workflowBundleFile = path.join(TMP_DIR, `workflow-bundle-${runId}.js`);
    fs.writeFileSync(info.workflowBundleFile, (await bundleWorkflows(QUIET_BUNDLER_LOG)).code);
    publishStack(info, stackFile);
    log(`workflow bundle ${info.workflowBundleFile} (${((Date.now() - t2) / 1000).toFixed(1)} s)`);

    // ---- PostgreSQL (scripts/provision/postgres.ts, owned by the Prisma toolchain) ----
    if (process.env.TREEWARDEN_TEST_NO_PG === '1') {
      log('TREEWARDEN_TEST_NO_PG=1: no PostgreSQL template (testStack()/freshDatabase() will throw)');
      return;
    }
    const t1 = Date.now();
    const pg = await import('../scripts/provision/postgres');
    const postgres = await pg.resolveTestPostgresAdminUrl(log);
    info.pgAdminUrl = postgres.adminUrl;
    globalThis.__TREEWARDEN_TEST_STACK__ = { info, stackFile, server, stopPostgres: postgres.stop };
    info.templateDb = `tw_test_tpl_${runId}`;
    // Published before creating the template, so teardown / a later reap can drop a half-created template.
    publishStack(info, stackFile);
    await pg.createMigratedTemplate(info.pgAdminUrl, info.templateDb);
    log(`migrated template database ${info.templateDb} (${((Date.now() - t1) / 1000).toFixed(1)} s)`);
  } catch (err) {
    // jest does not run globalTeardown when globalSetup throws: clean up here.
    const state = globalThis.__TREEWARDEN_TEST_STACK__ ?? { stackFile, server };
    globalThis.__TREEWARDEN_TEST_STACK__ = undefined;
    try {
      await teardownStack(state, log);
    } catch (cleanupErr) {
      log(`cleanup after failed setup: ${cleanupErr instanceof Error ? cleanupErr.message : String(cleanupErr)}`);
    }
    throw err;
  }
}
