/**
 * @module The operator console works for a person in a real browser (headless Chromium through
 * playwright-core) against a real stack: sign-in by board token into an httpOnly SameSite=Strict
 * session, a seeded tree that expands lazily, a pause whose live run turns cancelled without a reload,
 * the release and its resume, a hold whose stop left a survivor until it is gone, a live run's pids on its run page, a blocker resolved, no data of
 * another company, a watched issue and its review task linked both ways with the review run's write in the feed, an observe-mode
 * watchdog edited in the form and still observing, a refused request without the CSRF token, and sign-out revoking the session.
 * Screenshots of each page are kept under .tmp/console-screenshots (git-ignored).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { hashToken } from '../domain/tokens';
import { CHROMIUM_ARGS, ensureChromium } from '../scripts/provision/chromium';
import { reapOrphans } from '../processes/orphans';
import { runFiles } from '../runs/run-files';
import { eventually, runRow, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

type Company = Awaited<ReturnType<typeof seedCompany>>;

const SHOTS = resolve(__dirname, '..', '.tmp', 'console-screenshots');

let h: Harness;
let browser: Browser;
let acme: Company;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
  const executablePath = await ensureChromium((line) => process.stderr.write(`${line}\n`));
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  acme = await seedCompany(h, 'Acme console');
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** A fresh browser signed in with `token`, dialogs (confirmations) accepted. */
async function signedIn(token: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: h.apiUrl });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto('/ui');
  await page.getByLabel('Board token').fill(token);
  await page.getByLabel('Board token').press('Enter');
  await page.waitForURL(/\/ui$/);
  return { context, page };
}

async function wake(c: Company, issueId: string): Promise<string> {
  const r = await h.request('POST', `/api/issues/${issueId}/wake`, c.token, {});
  if (r.status !== 202) throw new Error(`wake: ${JSON.stringify(r.body)}`);
  return r.body.runId as string;
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

test('sign-in keeps the session in an httpOnly, SameSite=Strict cookie, never in the URL or storage; headers are set', async () => {
  const context = await browser.newContext({ baseURL: h.apiUrl });
  const page = await context.newPage();
  await page.goto('/ui');
  expect(new URL(page.url()).pathname).toBe('/ui/sign-in');
  await shot(page, 'sign-in');
  await page.getByLabel('Board token').fill('twb_not-a-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  expect(await page.getByRole('alert').innerText()).toContain('not a valid board token');

  await page.getByLabel('Board token').fill(acme.token);
  // keyboard only: Tab from the field reaches the button, Enter submits
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.textContent')).toBe('Sign in');
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/ui') && r.request().method() === 'GET'),
    page.keyboard.press('Enter'),
  ]);
  expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Acme console');
  expect(page.url()).not.toContain(acme.token);
  const [cookie] = (await context.cookies()).filter((c) => c.name === 'tw_session');
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  expect(cookie.value).not.toBe(acme.token);
  // scripts can read neither the board token nor the session (htmx keeps only its page history in sessionStorage)
  const readable = String(
    await page.evaluate('JSON.stringify([{ ...localStorage }, { ...sessionStorage }, document.cookie])'),
  );
  for (const secret of [acme.token, cookie.value]) expect(readable).not.toContain(secret);
  expect(await page.evaluate('document.cookie')).toBe('');
  const headers = response.headers();
  expect(headers['content-security-policy']).toContain("script-src 'self'");
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('SAMEORIGIN');
  await context.close();
});

test('the company page lists a seeded tree; the tree page expands it level by level, by mouse and by keyboard', async () => {
  const agent = await acme.agent();
  const root = await acme.issue({ title: 'Quarterly launch' });
  const child = await acme.issue({ title: 'Build the site', parentId: root.id, assigneeAgentId: agent.id });
  await acme.issue({ title: 'Write the copy', parentId: child.id, status: 'done' });
  await acme.issue({ title: 'Book the venue', parentId: root.id });
  const { context, page } = await signedIn(acme.token);
  await page.getByRole('link', { name: 'Quarterly launch' }).click();
  expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Issue tree: Quarterly launch');
  const tree = page.getByRole('tree', { name: 'Subtree of Quarterly launch' });
  await tree.getByRole('link', { name: 'Book the venue' }).waitFor();
  // the grandchild is not rendered until its parent is expanded
  expect(await tree.getByText('Write the copy').count()).toBe(0);
  await page.locator(`#node-${child.id} > details > summary`).focus();
  await page.keyboard.press('Enter');
  await tree.getByRole('link', { name: 'Write the copy' }).waitFor();
  expect(await page.locator(`#badges-${child.id}`).innerText()).toContain(`assignee: `);
  await shot(page, 'tree');
  await context.close();
});

/** A review agent that comments on the watched issue `ROOT` with its run token, then finishes its review task. */
const COMMENTING_REVIEWER = `
const api = (method, url, body) => fetch(process.env.TREEWARDEN_API_URL + url, { method, body: JSON.stringify(body),
  headers: { authorization: 'Bearer ' + process.env.TREEWARDEN_RUN_TOKEN, 'content-type': 'application/json' } })
  .then((r) => { if (!r.ok) process.exit(1); });
api('POST', '/api/issues/' + process.env.ROOT + '/comments', { body: 'checked the release notes' })
  .then(() => api('PATCH', '/api/issues/' + process.env.TREEWARDEN_ISSUE_ID, { status: 'done', comment: 'reviewed' }));
`;

test("a watched issue and its review task link to each other, and the feed shows the review run's write", async () => {
  const root = await acme.issue({ title: 'Audited release' });
  await acme.issue({ title: 'Release notes', parentId: root.id, status: 'done' });
  const reviewer = await acme.agent({
    type: 'process',
    command: process.execPath,
    args: ['-e', COMMENTING_REVIEWER],
    env: { ROOT: root.id },
  });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, acme.token, { agentId: reviewer.id });
  const comment = await eventually('the review run commented', () =>
    h.services.db.comment.findFirst({ where: { issueId: root.id, runId: { not: null } } }),
  );
  const run = await runRow(h, comment.runId!);
  const { context, page } = await signedIn(acme.token);
  await page.goto(`/ui/issues/${root.id}`);
  const toReview = page.locator(`#badges-${root.id} [data-review-task]`);
  expect(await toReview.getAttribute('href')).toBe(`/ui/issues/${run.issueId}`);
  const back = page.locator(`#badges-${run.issueId} [data-review-of]`);
  expect(await back.getAttribute('href')).toBe(`/ui/issues/${root.id}`);
  const written = page.locator(`[data-activity-for="${root.id}"] tr[data-activity-action="issue.comment_added"]`);
  const facts = await written.locator(`[data-watchdog-run="${run.id}"]`).innerText();
  for (const id of [put.body.id, run.issueId, run.id, run.reviewFingerprint!]) expect(facts).toContain(id.slice(0, 8));
  await shot(page, 'tree-watchdog-feed');
  await context.close();
});

test("an issue's pending monitor shows on its badges, with its time and note", async () => {
  const issue = await acme.issue({ title: 'Checked tomorrow', assigneeAgentId: (await acme.agent()).id });
  const at = new Date(Date.now() + 86_400_000).toISOString();
  const put = await h.request('PUT', `/api/issues/${issue.id}/monitor`, acme.token, { at, note: 'is it green?' });
  expect(put.status).toBe(201);
  const { context, page } = await signedIn(acme.token);
  await page.goto(`/ui/issues/${issue.id}`);
  const badge = page.locator(`#badges-${issue.id} [data-monitor-at]`);
  expect([await badge.getAttribute('data-monitor-at'), await badge.getAttribute('title')]).toEqual([
    at,
    'is it green?',
  ]);
  await context.close();
});

test("editing an observe-mode watchdog's instructions in the console keeps it observing and wakes nobody", async () => {
  const watcher = await acme.agent();
  const root = await acme.issue({ title: 'Observed rollout' });
  await acme.issue({ title: 'Rollout notes', parentId: root.id, status: 'done' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, acme.token, {
    agentId: watcher.id,
    mode: 'observe',
  });
  const { context, page } = await signedIn(acme.token);
  await page.goto(`/ui/issues/${root.id}`);
  expect(await page.getByLabel('Mode').inputValue()).toBe('observe');
  await page.getByLabel('Instructions').fill('check the rollout notes');
  await page.getByLabel('Re-checks before escalating').fill('5');
  await page.getByRole('button', { name: 'Update watchdog' }).click();
  await page.locator('#action-result').getByText('Watchdog updated').waitFor();
  const after = await h.request('GET', `/api/issues/${root.id}/watchdog`, acme.token);
  expect(after.body).toMatchObject({
    id: put.body.id,
    mode: 'observe',
    instructions: 'check the rollout notes',
    repeatLimit: 5,
  });
  // the instructions are fingerprint material: the edited watchdog's stop is a new one, observed, not reviewed
  await eventually('the edited stop observed', async () => {
    const row = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: put.body.id } });
    return row.triggerCount === 2 ? row : null;
  });
  expect(await h.services.db.wakeRequest.count({ where: { reviewWatchdogId: put.body.id } })).toBe(0);
  await context.close();
});

test('a 2,000-node subtree stays usable: one page of children is rendered, the rest on request', async () => {
  const root = await acme.issue({ title: 'Big migration' });
  // written directly: 2,000 API calls would only slow the test, the page reads the same rows
  await h.services.db.issue.createMany({
    data: Array.from({ length: 2_000 }, (_, i) => ({
      companyId: acme.companyId,
      parentId: root.id,
      title: `shard ${String(i).padStart(4, '0')}`,
    })),
  });
  const { context, page } = await signedIn(acme.token);
  await page.goto(`/ui/issues/${root.id}`);
  const items = page.locator(`#node-${root.id} > details > ul > li[role=treeitem]`);
  expect(await items.count()).toBe(200);
  await page.getByRole('button', { name: 'Show 1800 more' }).click();
  await page.getByRole('button', { name: 'Show 1600 more' }).waitFor();
  expect(await items.count()).toBe(400);
  // the second page continues the first: 400 different issues
  expect(new Set(await items.evaluateAll((lis) => lis.map((li) => li.getAttribute('aria-label')))).size).toBe(400);
  await context.close();
});

test('pausing from the tree page turns the live run cancelled without a reload; releasing shows its resume', async () => {
  const marker = `/tmp/tw-console-${randomBytes(6).toString('hex')}`;
  const agent = await acme.agent({
    type: 'process',
    command: 'true',
    prepare: { command: 'sh', args: ['-c', `test -f ${marker} && exit 0; touch ${marker}; sleep 60 & wait`] },
  });
  const parent = await acme.issue({ title: 'Release train' });
  const child = await acme.issue({
    title: 'Migrate the schema',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  const runId = await wake(acme, child.id);
  await eventually('prepare step running', async () => existsSync(marker));

  const { context, page } = await signedIn(acme.token);
  await page.goto(`/ui/issues/${parent.id}`);
  const runBadge = page.locator(`#badges-${child.id} [data-run-status]`);
  await eventually('the run shown running', async () => (await runBadge.getAttribute('data-run-status')) === 'running');
  await page.getByRole('button', { name: 'Pause subtree' }).click();
  await page.locator('#action-result').getByText('Paused').waitFor();
  // no reload: the tree's poll brings the stopped run's state
  await eventually(
    'the run shown cancelled',
    async () => (await runBadge.getAttribute('data-run-status')) === 'cancelled',
  );
  expect((await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe('cancelled');
  const hold = await h.services.db.treeHold.findFirstOrThrow({ where: { rootIssueId: parent.id } });
  await page
    .locator(`#badges-${child.id}`)
    .getByRole('link', { name: `held ${hold.id.slice(0, 8)}` })
    .waitFor();
  await shot(page, 'tree-paused');

  await page.getByRole('button', { name: `Release hold ${hold.id.slice(0, 8)} without waking` }).click();
  const released = page.locator('#action-result');
  await released.getByText('Released').waitFor();
  expect(await released.innerText()).toContain(child.id);
  await page.goto(`/ui/holds/${hold.id}`);
  const resume = page.locator(`tr[data-issue="${child.id}"] td.resume`);
  expect(await resume.getAttribute('data-resume')).toBe('claimed');
  expect(await page.locator('#hold-status').getAttribute('data-status')).toBe('released');
  expect(await page.locator('#hold-stops').getAttribute('data-stop-state')).toBe('verified');
  expect(await page.locator(`tr[data-issue="${child.id}"] td.stop`).getAttribute('data-stop')).toBe('verified');
  expect(await page.getByRole('link', { name: `tree-hold:${hold.id}` }).getAttribute('href')).toContain(
    encodeURIComponent(`tree-hold:${hold.id}`),
  );
  await shot(page, 'hold');
  await context.close();
});

test('a hold page shows a stop that left a survivor, and turns verified without a reload once it is gone', async () => {
  // a writer the run names in its writer lock but does not own: no stop signals it, none is clean while it lives
  const writer = spawn('sleep', ['300'], { stdio: 'ignore' });
  try {
    const agent = await acme.agent({
      type: 'process',
      command: 'sh',
      args: ['-c', `echo ${writer.pid} > "$TREEWARDEN_WRITER_LOCK"; sleep 120`],
    });
    const parent = await acme.issue({ title: 'Data migration' });
    const child = await acme.issue({ title: 'Copy the rows', parentId: parent.id, assigneeAgentId: agent.id });
    const runId = await wake(acme, child.id);
    await eventually('the run started', async () => (await runRow(h, runId)).processGroupId !== null);
    const pause = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, acme.token, { mode: 'pause' });
    await settled(h, runId);

    const { context, page } = await signedIn(acme.token);
    await page.goto(`/ui/holds/${pause.body.id}`);
    const stops = page.locator('#hold-stops');
    expect(await stops.getAttribute('data-stop-state')).toBe('partial');
    expect(await page.locator('#hold-status').getAttribute('data-status')).toBe('active');
    expect(await page.locator('#hold-status').innerText()).toBe('active · stops partial');
    expect(await stops.innerText()).toBe('not verified: 1 run left 0 processes and 1 writer');
    expect(await page.locator(`tr[data-issue="${child.id}"] td.stop`).getAttribute('data-stop')).toBe('partial');
    const survivor = page.locator(`#hold-survivors tr[data-run="${runId}"]`);
    expect(await survivor.locator('td').nth(1).innerText()).toBe('Copy the rows');
    expect(await survivor.locator('td').nth(3).innerText()).toBe('1');
    await shot(page, 'hold-partial');

    writer.kill('SIGKILL');
    await eventually('the writer exited', async () => writer.exitCode !== null || writer.signalCode !== null);
    expect((await reapOrphans(h.services)).verified).toContain(runId);
    // no reload: the page's poll brings the verified stop
    await eventually(
      'the stops shown verified',
      async () => (await stops.getAttribute('data-stop-state')) === 'verified',
    );
    expect(await page.locator('#hold-survivors').count()).toBe(0);
    expect(await page.locator('#hold-status').innerText()).toBe('active');
    expect(await page.locator(`tr[data-issue="${child.id}"] td.stop`).getAttribute('data-stop')).toBe('verified');
    await h.request('POST', `/api/issues/${parent.id}/tree-holds/${pause.body.id}/release`, acme.token, {});
    await context.close();
  } finally {
    writer.kill('SIGKILL');
  }
});

test("a live process run's page shows its task, run id, workspace, writer lock, lease, monitor and pids; stopping it shows the verified result", async () => {
  const agent = await acme.agent({ type: 'process', command: 'sh', args: ['-c', 'sleep 60 & sleep 61 & wait'] });
  const issue = await acme.issue({ title: 'Long build', assigneeAgentId: agent.id, status: 'todo' });
  const runId = await wake(acme, issue.id);
  // the whole tree (start shell, sandbox, sh and both sleeps): a partial one grows while the page loads
  await eventually('both sleeps started', async () => {
    const view = await h.request('GET', `/api/runs/${runId}/inspect`, acme.token);
    const commands = (view.body.processTree?.processes ?? []).map((p: { command: string }) => p.command);
    return commands.includes('sleep 60') && commands.includes('sleep 61');
  });
  const monitor = await h.request('POST', `/api/runs/${runId}/jobs`, acme.token, {
    kind: 'monitor',
    command: 'sleep',
    args: ['300'],
  });
  expect(monitor.status).toBe(201);
  await eventually('the monitor running', async () => {
    const job = await h.services.db.job.findUniqueOrThrow({ where: { id: monitor.body.id } });
    return job.status === 'running' && job.processGroupId !== null;
  });
  // its supervisor renews the lease on its first tick
  const run = await eventually('the lease renewed', async () => {
    const row = await runRow(h, runId);
    return row.leaseRenewedAt ? row : null;
  });
  const view = await h.request('GET', `/api/runs/${runId}/inspect`, acme.token);
  const pids: number[] = view.body.processTree.processes.map((p: { pid: number }) => p.pid);

  const { context, page } = await signedIn(acme.token);
  await page.goto(`/ui/runs/${runId}`);
  // seed 003's ownership facts, each in its row
  const fact = (name: string) =>
    page.locator('table[aria-label="Ownership"] tr', { has: page.locator('th', { hasText: name }) }).locator('td');
  expect(await fact('Task').innerText()).toBe('Long build');
  expect(await fact('Task').locator('a').getAttribute('href')).toBe(`/ui/issues/${issue.id}`);
  expect(await fact('Run id').innerText()).toContain(runId);
  expect(await fact('Workspace').innerText()).toContain(run.workdir!);
  expect(await fact('Writer lock').innerText()).toMatch(/^(free|pid \d+(, pid \d+)*)$/);
  expect(await fact('Lease').innerText()).toMatch(/^held, renewed /);
  const monitorRow = page.locator('tr', { has: page.locator('td', { hasText: 'monitor' }) });
  expect(await monitorRow.locator('td').nth(0).innerText()).toBe(monitor.body.id.slice(0, 8));
  expect(await monitorRow.locator('td').nth(3).innerText()).toBe('running');
  const listed = await page
    .locator('li[data-pid]')
    .evaluateAll((items) => items.map((li) => Number(li.getAttribute('data-pid'))));
  expect(listed.sort()).toEqual([...pids].sort());
  const graph = page.getByRole('img', { name: `Process tree of run ${runId}` });
  for (const pid of pids) await graph.getByText(`pid ${pid}`, { exact: true }).waitFor();
  expect(await page.getByRole('link', { name: `agent-run:${runId}` }).getAttribute('href')).toContain(
    encodeURIComponent(`agent-run:${runId}`),
  );
  await shot(page, 'run');

  await page.getByRole('button', { name: 'Stop run' }).click();
  await page.locator('#action-result').getByText('Stopped (verified)').waitFor({ timeout: 60_000 });
  expect(await page.locator('#action-result').innerText()).toContain('terminal-clean');
  await eventually('the page shows no live process', async () => (await page.locator('#no-processes').count()) === 1);
  await context.close();
});

test('resolving an execution blocker from the company page', async () => {
  const agent = await acme.agent({
    type: 'process',
    command: 'sh',
    args: [
      '-c',
      '[ "$TREEWARDEN_WAKE_REASON" = issue_tree_resumed ] && exit 0; echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 60 & wait',
    ],
  });
  const parent = await acme.issue({ title: 'Nightly import' });
  const child = await acme.issue({
    title: 'Load the data',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  const runId = await wake(acme, child.id);
  await eventually('the agent is mid-command', async () => existsSync(runFiles(runId, null).journal));
  const pause = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, acme.token, { mode: 'pause' });
  await eventually(
    'the run stopped',
    async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).status === 'cancelled',
  );
  await h.request('POST', `/api/issues/${parent.id}/tree-holds/${pause.body.id}/release`, acme.token, {});
  const blocker = await eventually('the blocker', () =>
    h.services.db.executionBlocker.findFirst({ where: { runId, status: 'active' } }),
  );

  const { context, page } = await signedIn(acme.token);
  const resolve = page.getByRole('button', { name: `Resolve blocker ${blocker.id.slice(0, 8)}: no external effects` });
  await shot(page, 'company');
  await resolve.click();
  await page.locator('#action-result').getByText('Blocker resolved').waitFor();
  expect((await h.services.db.executionBlocker.findUniqueOrThrow({ where: { id: blocker.id } })).status).toBe(
    'resolved',
  );
  await eventually('the blocker gone from the page', async () => (await resolve.count()) === 0);
  await context.close();
});

test("a second company's session sees none of the first company's data", async () => {
  const other = await seedCompany(h, 'Other console');
  const secret = await acme.issue({ title: 'Acme secret plan' });
  const { context, page } = await signedIn(other.token);
  expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Other console');
  const text = await page.locator('main').innerText();
  for (const title of ['Acme secret plan', 'Quarterly launch', 'Release train', 'Long build'])
    expect(text).not.toContain(title);
  const run = await h.services.db.run.findFirstOrThrow({ where: { companyId: acme.companyId } });
  const hold = await h.services.db.treeHold.findFirstOrThrow({ where: { companyId: acme.companyId } });
  for (const url of [
    `/ui/issues/${secret.id}`,
    `/ui/runs/${run.id}`,
    `/ui/holds/${hold.id}`,
    `/ui/issues/${secret.id}/children`,
  ]) {
    const response = await page.goto(url);
    expect(response?.status()).toBe(404);
    expect(await page.locator('main').innerText()).not.toContain('Acme secret plan');
  }
  await context.close();
});

test('a state-changing request without the CSRF token is refused and changes nothing; signing out revokes the session', async () => {
  const issue = await acme.issue({ title: 'Guarded tree' });
  const { context, page } = await signedIn(acme.token);
  const refused = await context.request.post(`/ui/issues/${issue.id}/pause`, { form: { reason: 'forged' } });
  expect(refused.status()).toBe(403);
  expect((await refused.json()).error.message).toContain('CSRF');
  expect(await h.services.db.treeHold.count({ where: { rootIssueId: issue.id } })).toBe(0);

  // nor can another site sign a browser in (login CSRF)
  const foreign = await fetch(`${h.apiUrl}/ui/sign-in`, {
    method: 'POST',
    headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${acme.token}`,
    redirect: 'manual',
  });
  expect(foreign.status).toBe(403);
  expect(foreign.headers.get('set-cookie')).toBeNull();

  const [cookie] = (await context.cookies()).filter((c) => c.name === 'tw_session');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/ui\/sign-in$/);
  expect(
    (await h.services.db.apiToken.findUniqueOrThrow({ where: { tokenHash: hashToken(cookie.value) } })).revokedAt,
  ).not.toBeNull();
  // the old cookie no longer opens anything
  const replay = await fetch(`${h.apiUrl}/ui`, {
    headers: { cookie: `tw_session=${cookie.value}` },
    redirect: 'manual',
  });
  expect(replay.status).toBe(303);
  expect(replay.headers.get('location')).toBe('/ui/sign-in');
  await context.close();
});

test('an expired session is deleted at the next sign-in, and opens nothing before that', async () => {
  const signIn = () =>
    fetch(`${h.apiUrl}/ui/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${acme.token}`,
      redirect: 'manual',
    });
  const first = await signIn();
  const secret = /tw_session=([^;]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1] ?? '';
  const tokenHash = hashToken(secret);
  await h.services.db.apiToken.update({ where: { tokenHash }, data: { expiresAt: new Date(Date.now() - 1_000) } });
  const expired = await fetch(`${h.apiUrl}/ui`, { headers: { cookie: `tw_session=${secret}` }, redirect: 'manual' });
  expect(expired.status).toBe(303);
  expect(await h.services.db.apiToken.count({ where: { tokenHash } })).toBe(1);

  const next = await signIn();
  expect(next.status).toBe(303);
  expect(await h.services.db.apiToken.count({ where: { tokenHash } })).toBe(0);
  // live sessions stay: the one just started opens the console
  const live = /tw_session=([^;]+)/.exec(next.headers.get('set-cookie') ?? '')?.[1] ?? '';
  expect(
    (await fetch(`${h.apiUrl}/ui`, { headers: { cookie: `tw_session=${live}` }, redirect: 'manual' })).status,
  ).toBe(200);
});

test('the favicon is answered without a session, with no content', async () => {
  const favicon = await fetch(`${h.apiUrl}/favicon.ico`);
  expect(favicon.status).toBe(204);
  expect(await favicon.text()).toBe('');
});
