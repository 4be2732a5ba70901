/**
 * @module A real ACP agent on the real stack, sandbox on (issue 46): Claude Code's ACP agent (claude-agent-acp, the
 * pinned release that scripts/provision/acp-agents.ts installs into the user cache) runs under treewarden's ACP
 * supervisor in the run's sandbox, offline: its command is test/fixtures/claude-offline.ts, which starts a fake
 * Anthropic API (test/fixtures/fake-anthropic.ts) on the sandbox's own loopback and runs the agent against it. One
 * turn writes a file; a pause mid-turn is acknowledged by Claude (`cancelled`), so it is preserved, and its release
 * continues the same Claude session in a new run.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runFiles } from '../runs/run-files';
import { ensureClaudeAgentAcp } from '../scripts/provision/acp-agents';
import { journalOf, TSX_LOADER } from '../testing/acp';
import { eventually, seedCompany, settled as settledRun, startHarness, type Harness } from '../testing/harness';
import { REPO_ROOT } from '../testing/stack';
import { HELLO_CONTENT, REQUEST_LOG, STALL_MARKER, type RequestSummary } from './fixtures/fake-anthropic';

jest.setTimeout(240_000);

type SeededCompany = Awaited<ReturnType<typeof seedCompany>>;

let h: Harness;
let scratch: string;
let claudeAgentAcp: string;
beforeAll(async () => {
  // the first time on a machine: 111 packages, about 400 MB from the npm registry
  claudeAgentAcp = await ensureClaudeAgentAcp();
  h = await startHarness();
  scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'acp-real-agent-')));
}, 600_000);
afterAll(async () => {
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

let workspaces = 0;
/** An issue assigned to an `acp` agent running Claude Code offline, in a workspace of its own (HOME inside it). */
async function claudeIssue(c: SeededCompany) {
  const workspace = path.join(scratch, `ws-${++workspaces}`);
  const home = path.join(workspace, '.home');
  mkdirSync(home, { recursive: true });
  const agent = await c.agent({
    type: 'acp',
    command: process.execPath,
    args: ['--import', TSX_LOADER, path.join(REPO_ROOT, 'test', 'fixtures', 'claude-offline.ts'), claudeAgentAcp],
    env: { HOME: home },
    cwd: workspace,
  });
  const parent = await c.issue({ title: 'claude parent' });
  const child = await c.issue({
    title: 'claude child',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'todo',
  });
  return { workspace, agent, parent, child };
}

const requestsOf = (workspace: string): RequestSummary[] => {
  const file = path.join(workspace, REQUEST_LOG);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RequestSummary);
};

async function wake(c: SeededCompany, issueId: string, task: string): Promise<string> {
  const r = await h.request('POST', `/api/issues/${issueId}/wake`, c.token, { context: { task } });
  expect(r.status).toBe(202);
  return r.body.runId as string;
}

const settled = (runId: string) => settledRun(h, runId, 180_000);

/** The run's output (the agent's stderr among it), for a failure's message. */
const outputOf = (runId: string, workspace: string) => {
  const file = runFiles(runId, workspace).output;
  return existsSync(file) ? readFileSync(file, 'utf8').slice(-4000) : '(no output)';
};

async function expectSucceeded(runId: string, workspace: string) {
  const run = await settled(runId);
  if (run.status !== 'succeeded') throw new Error(`run ${runId} ${run.status}: ${outputOf(runId, workspace)}`);
  expect(run).toMatchObject({ status: 'succeeded', exitCode: 0 });
}

test('a turn of Claude Code, offline in the sandbox: it writes the file, the journal has the tool call, the run succeeds', async () => {
  expect(h.services.sandbox.kind).toBe('namespaces'); // the run's own loopback: the fake API is reachable only there
  const c = await seedCompany(h);
  const { workspace, child } = await claudeIssue(c);
  const runId = await wake(c, child.id, 'Write hello.txt in the workspace.');
  await expectSucceeded(runId, workspace);
  expect(readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe(HELLO_CONTENT);
  const journal = journalOf(runId, workspace);
  // Claude's Write: announced as an edit, titled with the file, then completed
  const call = journal.find((l) => l.kind === 'tool_call' && l.toolKind === 'edit');
  expect(call).toBeDefined();
  const updates = journal.filter((l) => l.kind === 'tool_call_update' && l.toolCallId === call!.toolCallId);
  expect(updates).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ text: 'Write hello.txt' }),
      expect.objectContaining({ status: 'completed' }),
    ]),
  );
  expect(journal.filter((l) => l.kind === 'turn_end')).toEqual([expect.objectContaining({ stopReason: 'end_turn' })]);
  const { acpSession } = (await h.request('GET', `/api/runs/${runId}`, c.token)).body;
  expect(acpSession).toEqual({ sessionId: expect.any(String), origin: 'new' });
  // the model was the fake one, asked for the write and then given its result
  expect(requestsOf(workspace).map((r) => r.reply)).toEqual(expect.arrayContaining(['write', 'done']));
});

test('Claude Code paused mid-turn: it answers the cancel, the stop is preserved, and the release continues the same session', async () => {
  const c = await seedCompany(h);
  const { workspace, parent, child } = await claudeIssue(c);
  const runId = await wake(c, child.id, 'Write hello.txt in the workspace. STALL');
  await eventually('the fake model stalled the turn', async () => existsSync(path.join(workspace, STALL_MARKER)));
  const paused = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' });
  expect(paused.status).toBe(201);
  const holdId = paused.body.id as string;
  expect(await settled(runId)).toMatchObject({ status: 'cancelled', stopKind: 'operator_hold' });
  const stopped = (await h.request('GET', `/api/runs/${runId}`, c.token)).body;
  expect(stopped).toMatchObject({ stopOutcome: 'preserved', acpSession: { origin: 'new' } });
  expect(journalOf(runId, workspace).find((l) => l.kind === 'stop')).toMatchObject({
    acknowledged: true,
    checkpoint: true,
  });
  expect(journalOf(runId, workspace).filter((l) => l.kind === 'turn_end')).toEqual([
    expect.objectContaining({ stopReason: 'cancelled' }),
  ]);
  expect(existsSync(path.join(workspace, 'hello.txt'))).toBe(false);
  const sessionId = stopped.acpSession.sessionId as string;

  const released = await h.request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {});
  expect(released.status).toBe(200);
  expect(released.body.resumed).toEqual([{ issueId: child.id, runId: expect.any(String) }]);
  const resumedId: string = released.body.resumed[0].runId;
  await expectSucceeded(resumedId, workspace);
  const { acpSession } = (await h.request('GET', `/api/runs/${resumedId}`, c.token)).body;
  expect(acpSession).toEqual({ sessionId, origin: expect.stringMatching(/^(loaded|resumed)$/) });
  expect(readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe(HELLO_CONTENT);
  // the continuation's request to the model carried the interrupted turn: the same conversation, not a fresh one
  const requests = requestsOf(workspace);
  expect(requests.map((r) => r.reply)).toEqual(
    expect.arrayContaining(['stall', 'stall-closed-by-client', 'write', 'done']),
  );
  // the continuation's prompt does not repeat the task (its wake's context is the resume's facts); the first
  // prompt, earlier in the conversation, has it
  const write = requests.find((r) => r.reply === 'write')!;
  expect(write.userMessages).toBeGreaterThan(1);
  expect(write.helloIn).toEqual([0]);
});
