/**
 * @module A wake for a `process` agent really runs its command through Temporal and PostgreSQL: the run
 * ends succeeded or failed by exit code, its token works while it runs and dies with it, and a wake is
 * idempotent on its key.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { REPO_ROOT } from '../testing/stack';
import { runFiles } from '../runs/run-files';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

async function wakeAndSettle(token: string, issueId: string) {
  const wake = await h.request('POST', `/api/issues/${issueId}/wake`, token, {});
  expect(wake.status).toBe(202);
  return eventually('run to settle', async () => {
    const run = await h.request('GET', `/api/runs/${wake.body.runId}`, token);
    return ['succeeded', 'failed', 'cancelled'].includes(run.body.status) ? run.body : null;
  });
}

test('a process run that exits 0 succeeds and sees its run environment', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: [
      '-c',
      'test -n "$TREEWARDEN_RUN_TOKEN" && test "$TREEWARDEN_ISSUE_ID" = "$EXPECT" && test -f "$TREEWARDEN_CONTEXT_FILE"',
    ],
    env: {},
  });
  const issue = await c.issue({ title: 'env check', assigneeAgentId: agent.id });
  await h.request('PATCH', `/api/agents/${agent.id}`, c.token, {
    adapter: {
      type: 'process',
      command: 'sh',
      args: [
        '-c',
        `test -n "$TREEWARDEN_RUN_TOKEN" && test "$TREEWARDEN_ISSUE_ID" = "${issue.id}" && test -f "$TREEWARDEN_CONTEXT_FILE"`,
      ],
    },
  });
  const run = await wakeAndSettle(c.token, issue.id);
  expect(run).toMatchObject({ status: 'succeeded', issueId: issue.id, agentId: agent.id, wakeReason: 'manual_wake' });
  expect(run.exitCode).toBe(0);
});

test('a process run that exits non-zero fails', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', 'exit 3'] });
  const issue = await c.issue({ title: 'fails', assigneeAgentId: agent.id });
  const run = await wakeAndSettle(c.token, issue.id);
  expect(run).toMatchObject({ status: 'failed', exitCode: 3 });
});

test('a run can call back with its token while it runs; the token dies with the run', async () => {
  const c = await seedCompany(h);
  const script =
    'curl -sf -X POST -H "authorization: Bearer $TREEWARDEN_RUN_TOKEN" -H "content-type: application/json" -d \'{"body":"hello from the run"}\' "$TREEWARDEN_API_URL/api/issues/$TREEWARDEN_ISSUE_ID/comments" > /dev/null && echo "$TREEWARDEN_RUN_TOKEN" > "$OUT"';
  const out = `/tmp/tw-token-${Date.now()}`;
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', script], env: { OUT: out } });
  const issue = await c.issue({ title: 'callback', assigneeAgentId: agent.id });
  const run = await wakeAndSettle(c.token, issue.id);
  expect(run.status).toBe('succeeded');
  const comments = await h.services.db.comment.findMany({ where: { issueId: issue.id } });
  expect(comments.map((x) => [x.body, x.authorKind, x.runId])).toEqual([['hello from the run', 'run', run.id]]);
  const { readFileSync } = await import('node:fs');
  const staleToken = readFileSync(out, 'utf8').trim();
  const after = await h.request('GET', `/api/issues/${issue.id}`, staleToken);
  expect(after.status).toBe(401);
});

test('in its sandbox, an agent edits its cwd workspace by relative paths, and nothing outside it or /tmp', async () => {
  const c = await seedCompany(h);
  const workspace = mkdtempSync(join(tmpdir(), 'tw-workspace-'));
  writeFileSync(join(workspace, 'README'), 'before\n');
  const outside = join(REPO_ROOT, `.sandbox-probe-${Date.now()}`);
  const script = `echo after >> README && mkdir -p src && echo made > src/new.txt; touch "$1"`;
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', script, 'sh', outside], cwd: workspace });
  const issue = await c.issue({ title: 'edit the workspace', assigneeAgentId: agent.id });
  const run = await wakeAndSettle(c.token, issue.id);
  expect(run).toMatchObject({ status: 'failed', exitCode: 1 }); // the last command, outside the workspace, failed
  expect(readFileSync(join(workspace, 'README'), 'utf8')).toBe('before\nafter\n');
  expect(readFileSync(join(workspace, 'src', 'new.txt'), 'utf8')).toBe('made\n');
  expect(existsSync(outside)).toBe(false);
  expect(readFileSync(runFiles(run.id, null).output, 'utf8')).toContain('Read-only file system');
  rmSync(workspace, { recursive: true, force: true });
});

test('a wake is idempotent on its key', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent();
  const issue = await c.issue({ title: 'idem', assigneeAgentId: agent.id });
  const first = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, { idempotencyKey: 'k1' });
  const second = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, { idempotencyKey: 'k1' });
  expect([first.status, second.status]).toEqual([202, 200]);
  expect(second.body.id).toBe(first.body.id);
  expect(await h.services.db.run.count({ where: { issueId: issue.id } })).toBe(1);
});
