/**
 * @module The CLI for people: `treewarden tree` prints a real subtree with the console's badges (and
 * the API's JSON under --json), `treewarden pause` pauses it through the API, and the service logs
 * are readable lines on a terminal and NDJSON otherwise.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { seedCompany, startHarness, type Harness } from '../testing/harness';

const root = path.join(__dirname, '..');
let h: Harness;
beforeAll(async () => {
  // the assigned issue never runs here: an hour's first-run grace keeps the watchdog from reviewing (and adding a
  // review issue to) the tree while a slow CLI starts
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '3600000' });
});
afterAll(async () => h?.close());

function run(file: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}
const cli = (args: string[], token: string) =>
  run(process.execPath, ['node_modules/.bin/tsx', 'cli/index.ts', ...args], {
    TREEWARDEN_API_URL: h.apiUrl,
    TREEWARDEN_TOKEN: token,
  });

test('tree prints the subtree with status, assignee, run, hold, watchdog and monitor badges; pause holds it', async () => {
  const c = await seedCompany(h, 'Acme cli');
  const agent = await c.agent({ type: 'noop' }, { name: 'builder' });
  const top = await c.issue({ title: 'Ship v2' });
  const mid = await c.issue({ title: 'Backend', parentId: top.id, assigneeAgentId: agent.id });
  await c.issue({ title: 'Schema', parentId: mid.id, status: 'done' });
  await c.issue({ title: 'Frontend', parentId: top.id });
  const put = await h.request('PUT', `/api/issues/${top.id}/watchdog`, c.token, { agentId: agent.id });
  expect(put.status).toBe(201);
  const monitorAt = new Date(Date.now() + 3_600_000).toISOString();
  expect((await h.request('PUT', `/api/issues/${mid.id}/monitor`, c.token, { at: monitorAt })).status).toBe(201);

  const printed = await cli(['tree', top.id], c.token);
  expect(printed).toMatchObject({ code: 0, stderr: '' });
  const lines = printed.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(new RegExp(`^Ship v2 {2}\\[todo\\] {2}watchdog.* {2}${top.id}$`));
  expect(lines[1]).toMatch(/^├─ Backend {2}\[todo\] {2}@builder {2}/);
  expect(lines[1]).toContain(`monitor at ${monitorAt}`);
  expect(lines[2]).toMatch(/^│ {2}└─ Schema {2}\[done\]/);
  expect(lines[3]).toMatch(/^└─ Frontend {2}\[todo\]/);

  const paused = await cli(['pause', top.id, '--reason', 'release freeze'], c.token);
  expect(paused.code).toBe(0);
  const hold = await h.services.db.treeHold.findFirstOrThrow({ where: { rootIssueId: top.id } });
  expect(hold).toMatchObject({ status: 'active', reason: 'release freeze' });
  expect(paused.stdout).toContain(`tree hold ${hold.id}: active, 4 issues paused`);

  const json = await cli(['tree', top.id, '--depth', '1', '--json'], c.token);
  const tree = JSON.parse(json.stdout);
  expect(tree.heldBy).toEqual([hold.id]);
  expect(
    tree.children.map((n: { title: string; heldBy: string[]; children: unknown }) => [n.title, n.heldBy, n.children]),
  ).toEqual([
    ['Backend', [hold.id], null],
    ['Frontend', [hold.id], []],
  ]);
  const shallow = await cli(['tree', top.id, '--depth', '1'], c.token);
  expect(shallow.stdout).toContain(`└─ … 1 below (treewarden tree ${mid.id})`);
  expect(shallow.stdout).toContain(`held ${hold.id.slice(0, 8)}`);
});

test("tree refuses another company's issue (exit 3) and a malformed id (exit 2)", async () => {
  const a = await seedCompany(h, 'A');
  const b = await seedCompany(h, 'B');
  const issue = await a.issue({ title: 'private' });
  const foreign = await cli(['tree', issue.id], b.token);
  expect(foreign.code).toBe(3);
  expect(foreign.stdout).not.toContain('private');
  expect((await cli(['tree', 'nope'], b.token)).code).toBe(2);
  expect(await h.services.db.treeHold.count({ where: { rootIssueId: issue.id } })).toBe(0);
});

test('service logs are readable lines on a terminal and NDJSON otherwise', async () => {
  const script =
    "require('./runtime/services').createLogger({ LOG_LEVEL: 'info' }, 'treewarden-api').info({ port: 8787 }, 'listening')";
  const piped = await run(process.execPath, ['--import', 'tsx', '-e', script]);
  expect(JSON.parse(piped.stdout)).toMatchObject({ name: 'treewarden-api', msg: 'listening', port: 8787 });
  // `script` gives the process a pseudo-terminal, as `npm start` in a shell does
  const tty = await run('script', ['-qec', `${process.execPath} --import tsx -e "${script}"`, '/dev/null']);
  expect(tty.stdout).toMatch(/INFO.*\(treewarden-api\).*listening/);
  expect(tty.stdout).not.toContain('"msg"');
});
