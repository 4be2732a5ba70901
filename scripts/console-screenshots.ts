/**
 * `npm run screenshots`: the console screenshots of docs/operations.md ("Operator console"), made by a program rather
 * than by hand. Starts a throwaway stack (Temporal dev server and embedded PostgreSQL on free ports, a worker and the
 * API in this process), seeds a company with a tree, a held branch and a live process run, and writes the tree page and
 * the run page from headless Chromium to docs/console-tree.png and docs/console-run.png.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { chromium } from 'playwright-core';
import { buildApi } from '../api/server';
import { createTreewardenClient, type TreewardenClient } from '../client';
import { parseConfig } from '../domain/config';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { createWorker } from '../workers/create-worker';
import { eventually } from '../testing/harness';
import { connectServices } from '../runtime/services';
import { loadTemporalTarget } from '../temporal/connection';
import { CHROMIUM_ARGS, ensureChromium } from './provision/chromium';
import { startEmbeddedPostgres } from './provision/embedded-postgres';
import { ensureDatabase, migrateDeploy } from './provision/postgres';
import { startDevServer } from './provision/temporal-dev-server';

const root = resolve(__dirname, '..');
const DOCS = join(root, 'docs');
const say = (line: string) => process.stdout.write(`[screenshots] ${line}\n`);

/** A launch tree: a held branch, a finished branch and a build whose agent is running three processes. */
async function seed(admin: TreewardenClient, apiUrl: string) {
  const company = await admin.createCompany({ name: 'Northwind Robotics' });
  const board = createTreewardenClient({ baseUrl: apiUrl, token: company.boardToken });
  const builder = await board.createAgent(company.id, {
    name: 'builder',
    adapter: { type: 'process', command: 'sh', args: ['-c', 'sleep 300 & sleep 301 & wait'] },
  });
  const reviewer = await board.createAgent(company.id, { name: 'reviewer', adapter: { type: 'noop' } });
  const writer = await board.createAgent(company.id, { name: 'writer', adapter: { type: 'noop' } });
  const launch = await board.createIssue(company.id, {
    title: 'Launch the v2 controller',
    watchdog: { agentId: reviewer.id, instructions: 'Every leaf needs evidence.' },
  });
  const firmware = await board.createIssue(company.id, {
    title: 'Firmware',
    parentId: launch.id,
    status: 'in_progress',
  });
  const build = await board.createIssue(company.id, {
    title: 'Build the release image',
    parentId: firmware.id,
    assigneeAgentId: builder.id,
    status: 'in_progress',
  });
  await board.createIssue(company.id, { title: 'Flash the test rig', parentId: firmware.id, status: 'todo' });
  const docs = await board.createIssue(company.id, {
    title: 'Documentation',
    parentId: launch.id,
    status: 'in_progress',
  });
  await board.createIssue(company.id, {
    title: 'Write the upgrade guide',
    parentId: docs.id,
    assigneeAgentId: writer.id,
    status: 'in_review',
  });
  await board.createIssue(company.id, { title: 'Release notes', parentId: docs.id, status: 'done' });
  const wake = await board.wakeIssue(build.id, {});
  const runId = wake.runId as string;
  await eventually(
    'the build run to start its processes',
    async () => {
      const view = await board.inspectWork(runId);
      return view.processTree.visible && view.processTree.processes.length >= 3;
    },
    60_000,
  );
  await board.pauseTree(docs.id, { reason: 'waiting for legal review' });
  return { token: company.boardToken, launchId: launch.id, firmwareId: firmware.id, runId };
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'treewarden-screenshots-'));
  const stops: (() => Promise<unknown>)[] = [() => Promise.resolve(rmSync(work, { recursive: true, force: true }))];
  try {
    const temporal = await startDevServer({ searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES }, log: say });
    stops.unshift(temporal.stop);
    const pg = await startEmbeddedPostgres({ clusterDir: join(work, 'postgres'), durable: false, log: say });
    stops.unshift(pg.stop);
    const databaseUrl = await ensureDatabase(pg.adminUrl, 'treewarden');
    await migrateDeploy(databaseUrl);
    const adminToken = `twa_${randomBytes(24).toString('base64url')}`;
    const config = parseConfig({
      DATABASE_URL: databaseUrl,
      TREEWARDEN_TASK_QUEUE: `screenshots-${randomBytes(3).toString('hex')}`,
      TREEWARDEN_ADMIN_TOKEN: adminToken,
      TREEWARDEN_WORKER_METRICS_PORT: '0',
      ...(temporal.uiUrl ? { TEMPORAL_UI_URL: temporal.uiUrl } : {}),
      LOG_LEVEL: 'warn',
    });
    const target = loadTemporalTarget({ TEMPORAL_ADDRESS: temporal.address });
    const services = await connectServices(config, target, pino({ level: config.LOG_LEVEL }));
    stops.unshift(() => services.close());
    const connection = await NativeConnection.connect(target.connection);
    const worker = await createWorker(services, { connection });
    const running = worker.run();
    stops.unshift(async () => {
      worker.shutdown();
      await running;
      await connection.close();
    });
    const app = buildApi(services);
    const apiUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    stops.unshift(() => app.close());
    services.config.TREEWARDEN_API_URL = apiUrl;

    const seeded = await seed(createTreewardenClient({ baseUrl: apiUrl, token: adminToken }), apiUrl);
    const browser = await chromium.launch({ executablePath: await ensureChromium(say), args: CHROMIUM_ARGS });
    stops.unshift(() => browser.close());
    const page = await browser.newPage({ baseURL: apiUrl, viewport: { width: 1200, height: 800 } });
    page.setDefaultTimeout(30_000);
    await page.goto('/ui/sign-in');
    await page.getByLabel('Board token').fill(seeded.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/ui$/);
    mkdirSync(DOCS, { recursive: true });

    await page.goto(`/ui/issues/${seeded.launchId}`);
    // expand every level (each expansion loads its children)
    const closed = page.locator('ul[role=tree] details:not([open]) > summary');
    for (let i = 0; i < 20 && (await closed.count()) > 0; i++) {
      // by keyboard: a click on the summary's middle may land on the issue's link
      await closed.first().focus();
      await page.keyboard.press('Enter');
      const loading = page.locator('ul[role=tree] details[open] > ul > [aria-busy=true]');
      await eventually('the level to load', async () => (await loading.count()) === 0, 60_000);
    }
    const build = page.getByRole('link', { name: 'Build the release image' });
    await eventually('the expanded levels', async () => (await build.count()) === 1, 60_000);
    await page.locator(`#badges-${seeded.firmwareId}`).waitFor();
    await page.evaluate('document.activeElement.blur()');
    await page.screenshot({ path: join(DOCS, 'console-tree.png'), fullPage: true });
    say(`wrote ${join(DOCS, 'console-tree.png')}`);

    await page.goto(`/ui/runs/${seeded.runId}`);
    await page.getByRole('img', { name: `Process tree of run ${seeded.runId}` }).waitFor();
    await page.screenshot({ path: join(DOCS, 'console-run.png'), fullPage: true });
    say(`wrote ${join(DOCS, 'console-run.png')}`);
  } finally {
    for (const stop of stops) await stop().catch((error: unknown) => say(`cleanup: ${String(error)}`));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`screenshots failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
