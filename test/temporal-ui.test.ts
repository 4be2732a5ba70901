/**
 * @module Temporal UI tells the story: the dev server's real Web UI, in headless Chromium, lists a
 * company's watchdogs, holds and runs for the visibility query of docs/operations.md ("Finding things in the
 * Temporal UI"; and nothing of another company), and a workflow's page shows its state in one line.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../scripts/provision/chromium';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { holdInterruptsRun, runFails, watchdogWakes } from '../testing/scenarios';
import { testTemporalUiUrl } from '../testing/stack';

let h: Harness;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
  browser = await chromium.launch({ executablePath: await ensureChromium(() => {}), args: CHROMIUM_ARGS });
  page = await browser.newPage();
  page.setDefaultTimeout(30_000);
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const workflowsUrl = (query: string) =>
  `${testTemporalUiUrl()}/namespaces/${h.services.temporal.namespace}/workflows?query=${encodeURIComponent(query)}`;

/** The workflow ids the UI's list links to, as a user would read them off the table. */
async function listedWorkflowIds(): Promise<string[]> {
  const hrefs = await page
    .locator('table a[href*="/workflows/"]')
    .evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
  const ids = hrefs.map((href) => decodeURIComponent(href.split('/workflows/')[1].split('/')[0]));
  return [...new Set(ids)].sort();
}

/** Opens the workflow list filtered by `query` and waits until it lists exactly `expected`. */
async function expectListed(query: string, expected: string[]): Promise<void> {
  await page.goto(workflowsUrl(query));
  await eventually(
    `the UI to list ${query}`,
    async () => JSON.stringify(await listedWorkflowIds()) === JSON.stringify([...expected].sort()),
  ).catch(async (error: unknown) => {
    throw new Error(`${String(error)}; the UI listed ${JSON.stringify(await listedWorkflowIds())}`);
  });
}

/** The UI renders summaries and details (Temporal markdown) each in its own sandboxed iframe. */
async function renderedMarkdown(): Promise<string[]> {
  const frames = page.frames().filter((frame) => frame !== page.mainFrame());
  return (
    await Promise.all(
      frames.map((frame) =>
        frame
          .locator('body')
          .innerText()
          .catch(() => ''),
      ),
    )
  ).map((text) => text.trim());
}

test("docs/operations.md's query lists exactly a company's watchdogs, holds and runs; a hold's page shows its state", async () => {
  const acme = await seedCompany(h, 'Acme');
  const watchdog = await watchdogWakes(h, acme, { remove: false });
  const hold = await holdInterruptsRun(h, acme, { release: false });
  const other = await seedCompany(h, 'Other');
  const foreign = await runFails(h, other);
  const expected = [
    watchdog.watchdogWorkflowId,
    watchdog.reviewRunWorkflowId,
    hold.holdWorkflowId,
    hold.stoppedRunWorkflowId,
  ];
  const query = `TreewardenCompanyId = "${acme.companyId}"`;
  // visibility is eventually consistent; the UI reads the same index
  await eventually(
    'visibility to index the workflows',
    async () => (await h.services.client.workflow.count(query)).count === expected.length,
  );

  await expectListed(query, expected);
  expect(await listedWorkflowIds()).not.toContain(foreign.runWorkflowId);
  await expectListed(`${query} AND TreewardenKind = "task_watchdog"`, [watchdog.watchdogWorkflowId]);
  await expectListed(`${query} AND TreewardenKind = "agent_run"`, [
    watchdog.reviewRunWorkflowId,
    hold.stoppedRunWorkflowId,
  ]);
  await expectListed(`${query} AND TreewardenKind = "tree_hold" AND TreewardenState = "active"`, [hold.holdWorkflowId]);

  // the hold's page: its static summary, its current details (answered live by the worker) and the
  // summaries of the activities it ran
  await page
    .locator(`table a[href*="${encodeURIComponent(hold.holdWorkflowId)}"]`)
    .first()
    .click();
  await page.getByRole('tab', { name: 'User Metadata' }).click();
  await eventually('the current details and the summary', async () => {
    const shown = await renderedMarkdown();
    return (
      shown.includes('active: 2 issues paused, 1 runs interrupted; waiting for a release') &&
      shown.some((text) => /^Tree hold on .release train [0-9a-f]{4}.$/.test(text))
    );
  }).catch(async (error: unknown) => {
    throw new Error(`${String(error)}; the page showed ${JSON.stringify(await renderedMarkdown())}`);
  });
  await page.getByText('Pause the subtree and stop its runs').first().waitFor();
});
