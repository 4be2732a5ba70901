/**
 * @module `acp` runs on the real stack (issue 46): an agent that speaks the Agent Client Protocol (the fixture built
 * on the SDK's agent side, test/fixtures/acp-agent.ts) runs under treewarden's per-run ACP supervisor, in the run's
 * sandbox and cgroup. A stop has two layers: the supervisor alone gets SIGTERM (it cancels the turn, waits for the
 * answer and ends its agent), then the verified stop of whatever is left. A pause between tool calls is `preserved`
 * and its release continues the same session once, in a new run with a new token; a pause with a tool call open is
 * an unknown outcome, blocked and never replayed.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runFiles } from '../runs/run-files';
import { ACP_FIXTURE, journalOf } from '../testing/acp';
import { eventually, seedCompany, settled as settledRun, startHarness, type Harness } from '../testing/harness';
import { REPO_ROOT as root } from '../testing/stack';

type SeededCompany = Awaited<ReturnType<typeof seedCompany>>;

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness();
  scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'acp-runs-')));
});
afterAll(async () => {
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

let workspaces = 0;
/** An issue assigned to an `acp` agent running the fixture in `mode`, in a workspace of its own. */
async function acpIssue(c: SeededCompany, mode: string, env: Record<string, string> = {}, adapter: object = {}) {
  const workspace = path.join(scratch, `ws-${++workspaces}`);
  mkdirSync(workspace);
  const agent = await c.agent({
    type: 'acp',
    ...ACP_FIXTURE,
    env: { ACP_FIXTURE_MODE: mode, ACP_FIXTURE_THEN: 'work', ...env },
    cwd: workspace,
    ...adapter,
  });
  const parent = await c.issue({ title: 'acp parent' });
  const child = await c.issue({ title: 'acp child', parentId: parent.id, assigneeAgentId: agent.id, status: 'todo' });
  return { workspace, agent, parent, child };
}

interface FixtureSession {
  cwd: string;
  loads: number;
  prompts: number;
}
const fixtureSessions = (workspace: string): Record<string, FixtureSession> =>
  JSON.parse(readFileSync(path.join(workspace, '.acp-fixture-sessions.json'), 'utf8'));

async function wake(c: SeededCompany, issueId: string): Promise<string> {
  const r = await h.request('POST', `/api/issues/${issueId}/wake`, c.token, {});
  expect(r.status).toBe(202);
  return r.body.runId as string;
}

const settled = (runId: string) => settledRun(h, runId, 90_000);

const waitingForCancel = (runId: string, workspace: string) =>
  eventually('the agent waits mid-turn for a cancel', async () =>
    journalOf(runId, workspace).some((l) => l.kind === 'agent_message_chunk' && l.text === 'waiting for cancel'),
  );

/** A fixture agent in `mode`, woken and paused (its parent's subtree) while it waits mid-turn. */
async function pausedMidTurn(mode: string) {
  const c = await seedCompany(h);
  const { workspace, parent, child } = await acpIssue(c, mode);
  const runId = await wake(c, child.id);
  await waitingForCancel(runId, workspace);
  return { c, workspace, parent, child, runId, holdId: await pause(c, parent.id) };
}

async function pause(c: SeededCompany, issueId: string): Promise<string> {
  const r = await h.request('POST', `/api/issues/${issueId}/tree-holds`, c.token, { mode: 'pause' });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

test('an acp run: the supervisor runs the agent through one turn, journaled, and the run succeeds', async () => {
  const c = await seedCompany(h);
  const { workspace, child } = await acpIssue(c, 'work');
  const runId = await wake(c, child.id);
  expect(await settled(runId)).toMatchObject({ status: 'succeeded', exitCode: 0 });
  expect(readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toContain('hello');
  const statuses = journalOf(runId, workspace)
    .filter((l) => l.kind === 'tool_call' || l.kind === 'tool_call_update')
    .map((l) => l.status);
  expect(statuses).toEqual(expect.arrayContaining(['pending', 'completed']));
  const [[sessionId, session]] = Object.entries(fixtureSessions(workspace));
  expect(session).toEqual({ cwd: workspace, loads: 0, prompts: 1 });
  // claimed in the ledger before the prompt, and shown on the run
  const journal = journalOf(runId, workspace);
  const claimAt = journal.findIndex((l) => l.kind === 'session_claim' && l.answer === 'claimed');
  expect(claimAt).toBeGreaterThan(-1);
  expect(claimAt).toBeLessThan(journal.findIndex((l) => l.kind === 'turn_end'));
  expect((await h.request('GET', `/api/runs/${runId}`, c.token)).body.acpSession).toEqual({ sessionId, origin: 'new' });
  expect(await consoleRunPage(c.token, runId)).toContain(`<td class="mono" id="acp-session">${sessionId} (new)</td>`);
  expect(await cliInspect(c.token, runId)).toContain(`ACP session ${sessionId} (new)`);
});

test('what an acp run shows: its tool calls with their status, its last message, the permission decisions and the usage its agent reported, which the postmortem counts', async () => {
  const c = await seedCompany(h);
  const { workspace, parent, child } = await acpIssue(c, 'work');
  const runId = await wake(c, child.id);
  expect(await settled(runId)).toMatchObject({ status: 'succeeded' });
  const target = path.join(workspace, 'hello.txt');
  expect((await h.request('GET', `/api/runs/${runId}`, c.token)).body.acpActivity).toEqual({
    toolCalls: [{ toolCallId: 'write-1', title: 'Write hello.txt', kind: 'edit', status: 'completed' }],
    lastMessage: 'done',
    permissions: [
      {
        toolCallId: 'write-1',
        title: 'Write hello.txt',
        locations: [target],
        decision: 'allowed',
        optionId: 'yes',
        reason: expect.any(String),
      },
    ],
    usage: { tokens: 150, cost: { amount: 0.25, currency: 'USD' }, context: { used: 1200, size: 200_000 } },
  });
  const page = await consoleRunPage(c.token, runId);
  expect(page).toMatch(
    /<tr data-tool-call="write-1"><td class="mono">write-1<\/td><td>edit<\/td><td data-status="completed">/,
  );
  expect(page).toContain('<td data-decision="allowed">allowed (yes)</td>');
  expect(page).toContain('<strong>Last message:</strong> done</p>');
  expect(page).toContain('150 tokens · cost 0.25 USD');
  const inspected = await cliInspect(c.token, runId);
  expect(inspected).toContain('tool call write-1: completed — Write hello.txt');
  expect(inspected).toContain(`permission write-1 (Write hello.txt): allowed for ${target}`);
  expect(inspected).toContain('last message: done');
  expect(inspected).toContain('usage: 150 tokens, cost 0.25 USD, context 1200/200000');
  const postmortem = (await h.request('GET', `/api/issues/${parent.id}/postmortem`, c.token)).body;
  expect(postmortem.agentUsage).toMatchObject({
    tokens: { value: 150, unit: 'tokens' },
    cost: { amounts: [{ currency: 'USD', amount: 0.25 }] },
    reportingRuns: 1,
  });
});

/** `treewarden inspect <runId>` as an operator runs it */
function cliInspect(token: string, runId: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['node_modules/.bin/tsx', 'cli/index.ts', 'inspect', runId],
      { cwd: root, env: { ...process.env, TREEWARDEN_API_URL: h.apiUrl, TREEWARDEN_TOKEN: token }, timeout: 60_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(stdout)),
    ),
  );
}

/** The console's run page as a signed-in person gets it (sign-in form, then the page with its session cookie). */
async function consoleRunPage(boardToken: string, runId: string): Promise<string> {
  const signIn = await fetch(`${h.apiUrl}/ui/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: boardToken }).toString(),
    redirect: 'manual',
  });
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
  return (await fetch(`${h.apiUrl}/ui/runs/${runId}?fragment=1`, { headers: { cookie } })).text();
}

test('a pause between tool calls: the supervisor is stopped first, the stop is preserved, and the release continues the same session once with a new token', async () => {
  const { c, workspace, parent, child, runId, holdId } = await pausedMidTurn('block-clean');
  expect(await settled(runId)).toMatchObject({ status: 'cancelled', stopKind: 'operator_hold' });
  const stopped = (await h.request('GET', `/api/runs/${runId}`, c.token)).body;
  expect(stopped).toMatchObject({
    stopOutcome: 'preserved',
    stopResult: {
      verdict: 'terminal-clean',
      outcome: 'preserved',
      firstLayer: { exited: true },
      checkpoint: { resumable: true, session: { acp: { cwd: workspace } } },
    },
  });
  // the cancel reached the agent through the protocol, and it answered before it was ended
  expect(journalOf(runId, workspace).find((l) => l.kind === 'stop')).toMatchObject({
    acknowledged: true,
    checkpoint: true,
  });
  const [sessionId] = Object.keys(fixtureSessions(workspace));

  const released = await h.request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {});
  expect(released.status).toBe(200);
  expect(released.body.resumed).toEqual([{ issueId: child.id, runId: expect.any(String) }]);
  const resumedId: string = released.body.resumed[0].runId;
  expect(resumedId).not.toBe(runId);
  expect(await settled(resumedId)).toMatchObject({ status: 'succeeded', exitCode: 0 });
  // the same session, loaded once and prompted a second time: no fresh session
  expect(fixtureSessions(workspace)).toEqual({ [sessionId]: { cwd: workspace, loads: 1, prompts: 2 } });
  expect((await h.request('GET', `/api/runs/${resumedId}`, c.token)).body.acpSession).toEqual({
    sessionId,
    origin: 'loaded',
  });
  expect(await h.services.db.acpSession.findMany({ where: { sessionId } })).toEqual([
    expect.objectContaining({ runId: resumedId, claims: 2, cwd: workspace }),
  ]);
  // a new run token, distinct from the interrupted run's
  const tokens = await h.services.db.apiToken.findMany({ where: { runId: { in: [runId, resumedId] } } });
  expect(tokens.map((t) => t.runId).sort()).toEqual([runId, resumedId].sort());
  expect(new Set(tokens.map((t) => t.tokenHash)).size).toBe(2);
  expect((await h.request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {})).status).toBe(
    409,
  );
});

test('a pause with a tool call open: an unknown outcome, blocked, never replayed', async () => {
  const { c, workspace, parent, child, runId, holdId } = await pausedMidTurn('block-open');
  expect(await settled(runId)).toMatchObject({ status: 'cancelled' });
  const stopped = (await h.request('GET', `/api/runs/${runId}`, c.token)).body;
  expect(stopped.stopResult).toMatchObject({ verdict: 'terminal-clean', firstLayer: { exited: true } });
  expect(stopped.stopOutcome).not.toBe('preserved');
  expect(journalOf(runId, workspace).find((l) => l.kind === 'stop')).toMatchObject({
    acknowledged: true,
    checkpoint: false,
  });
  expect(stopped.executionBlocker).toMatchObject({ cause: 'stopped_mid_turn_unknown_outcome' });
  const released = await h.request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {});
  expect(released.body).toMatchObject({ resumed: [], skipped: [{ issueId: child.id, reason: 'execution_blocker' }] });
  expect(Object.values(fixtureSessions(workspace))).toEqual([{ cwd: workspace, loads: 0, prompts: 1 }]);
});

test('a hostile agent that writes a checkpoint of its own on the cancel: the supervisor did not vouch for it, so the outcome is unknown', async () => {
  const { c, workspace, parent, child, runId, holdId } = await pausedMidTurn('forge-checkpoint');
  expect(await settled(runId)).toMatchObject({ status: 'cancelled' });
  // the forged file is there, newer than the stop, and well-formed: only the supervisor's status tells it apart
  expect(JSON.parse(readFileSync(runFiles(runId, workspace).checkpoint, 'utf8'))).toEqual({
    resumable: true,
    session: { forged: true },
  });
  const stopped = (await h.request('GET', `/api/runs/${runId}`, c.token)).body;
  expect(stopped).toMatchObject({
    stopOutcome: 'unknown_outcome',
    stopResult: { verdict: 'terminal-clean', outcomeReason: 'not_vouched_by_supervisor' },
    executionBlocker: { cause: 'stopped_mid_turn_unknown_outcome' },
  });
  const released = await h.request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {});
  expect(released.body).toMatchObject({ resumed: [], skipped: [{ issueId: child.id, reason: 'execution_blocker' }] });
});

test('the session ledger: a run cannot claim a session another live run drives, nor claim for another run; once that run ends it may', async () => {
  const c = await seedCompany(h);
  const { workspace, agent, child: first } = await acpIssue(c, 'block-clean', { ACP_FIXTURE_KEEP_TOKEN: '1' });
  const second = await c.issue({ title: 'second', assigneeAgentId: agent.id, status: 'todo' });
  const firstRun = await wake(c, first.id);
  await waitingForCancel(firstRun, workspace);
  const secondRun = await wake(c, second.id);
  await waitingForCancel(secondRun, workspace);
  const sessionOf = async (runId: string) =>
    (await h.request('GET', `/api/runs/${runId}`, c.token)).body.acpSession.sessionId as string;
  const [firstSession, secondSession] = [await sessionOf(firstRun), await sessionOf(secondRun)];
  const secondToken = readFileSync(path.join(workspace, `.acp-fixture-token-${secondSession}`), 'utf8');
  const claim = (runId: string, sessionId: string, body: object = {}) =>
    h.request('PUT', `/api/runs/${runId}/acp-session`, secondToken, {
      sessionId,
      cwd: workspace,
      command: [process.execPath],
      host: 'h',
      origin: 'loaded',
      ...body,
    });

  const refused = await claim(secondRun, firstSession);
  expect([refused.status, refused.body.error.details]).toEqual([409, { reason: 'session_in_use', runId: firstRun }]);
  expect((await claim(firstRun, firstSession)).status).toBe(403); // another run's claim is not this token's to make
  const bad = await claim(secondRun, firstSession, { origin: 'borrowed', command: [] });
  expect(bad.status).toBe(400);
  expect(bad.body.error.message).toMatch(/origin|command/);
  expect((await h.services.db.run.findUniqueOrThrow({ where: { id: secondRun } })).acpSessionId).toBe(secondSession);
  // an activity report is untrusted (the agent can read the token): bounded, and only for the token's own run
  const report = (runId: string, toolCalls: number) =>
    h.request('PUT', `/api/runs/${runId}/acp-activity`, secondToken, {
      toolCalls: Array.from({ length: toolCalls }, (_, i) => ({
        toolCallId: `t${i}`,
        title: null,
        kind: null,
        status: 'completed',
      })),
      lastMessage: 'x'.repeat(1000),
      permissions: [],
      usage: { tokens: 1, cost: null, context: null },
    });
  expect((await report(secondRun, 21)).status).toBe(400);
  expect((await report(firstRun, 1)).status).toBe(403);
  expect((await report(secondRun, 20)).status).toBe(200);
  // messages taken and never prompted (a stop came first) go back to the queue: only the run's own, named by id
  const queued = await h.request('POST', `/api/issues/${second.id}/comments`, c.token, { body: 'a late thought' });
  const messages = (runId: string, what: string, body: object) =>
    h.request('POST', `/api/runs/${runId}/acp-messages/${what}`, secondToken, body);
  expect((await messages(secondRun, 'claim', {})).body.items.map((m: { id: string }) => m.id)).toEqual([
    queued.body.id,
  ]);
  expect((await messages(secondRun, 'return', { ids: ['not-an-id'] })).status).toBe(400);
  expect((await messages(firstRun, 'return', { ids: [queued.body.id] })).status).toBe(403);
  expect(await messages(secondRun, 'return', { ids: [queued.body.id] })).toEqual({
    status: 200,
    body: { returned: 1 },
  });
  const back = await h.services.db.comment.findUniqueOrThrow({ where: { id: queued.body.id } });
  expect([back.messageForRunId, back.deliveredToRunId, back.deliveredAt]).toEqual([secondRun, null, null]);

  expect((await h.request('POST', `/api/work/${firstRun}/stop`, c.token, {})).status).toBeLessThan(300);
  await settled(firstRun);
  const taken = await claim(secondRun, firstSession);
  expect([taken.status, taken.body]).toEqual([
    200,
    { sessionId: firstSession, runId: secondRun, origin: 'loaded', claims: 2, claimedAt: expect.any(String) },
  ]);
  expect((await h.request('POST', `/api/work/${secondRun}/stop`, c.token, {})).status).toBeLessThan(300);
  await settled(secondRun);
});

const promptsSeen = (workspace: string) =>
  readFileSync(path.join(workspace, '.acp-fixture-prompts.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { sessionId: string; text: string });

const comment = (c: SeededCompany, issueId: string, body: string) =>
  h.request('POST', `/api/issues/${issueId}/comments`, c.token, { body });

test("a person's comments while an acp run is live: the next prompt of its session once the turn ends, in order, once", async () => {
  const c = await seedCompany(h);
  const { workspace, child } = await acpIssue(c, 'wait-go');
  const runId = await wake(c, child.id);
  await eventually('the turn under way', async () =>
    journalOf(runId, workspace).some((l) => l.text === 'waiting for go'),
  );
  const first = (await comment(c, child.id, 'first: also update the changelog')).body;
  const second = (await comment(c, child.id, 'second: and ping the reviewer')).body;
  expect(first.message).toEqual({ forRunId: runId, deliveredToRunId: null, deliveredAt: null });
  writeFileSync(path.join(workspace, '.acp-fixture-go'), '');
  expect(await settled(runId)).toMatchObject({ status: 'succeeded', exitCode: 0 });
  const prompts = promptsSeen(workspace);
  expect(prompts).toHaveLength(2);
  expect(new Set(prompts.map((p) => p.sessionId)).size).toBe(1);
  const delivered = prompts[1].text;
  expect(delivered.indexOf(first.id)).toBeGreaterThan(-1);
  expect(delivered.indexOf(first.id)).toBeLessThan(delivered.indexOf(second.id));
  expect(delivered).toContain('also update the changelog');
  const rows = await h.services.db.comment.findMany({ where: { issueId: child.id }, orderBy: { createdAt: 'asc' } });
  expect(rows.map((m) => [m.id, m.messageForRunId, m.deliveredToRunId])).toEqual([
    [first.id, runId, runId],
    [second.id, runId, runId],
  ]);
  expect(journalOf(runId, workspace).filter((l) => l.kind === 'messages')).toEqual([
    expect.objectContaining({ ids: [first.id, second.id] }),
  ]);
  // once the run has ended, a comment is bookkeeping again
  expect((await comment(c, child.id, 'thanks')).body.message).toBeNull();
});

test('a message queued when the run is paused: its continuation delivers it after the resume prompt, once', async () => {
  const c = await seedCompany(h);
  const { workspace, parent, child } = await acpIssue(c, 'block-clean');
  const runId = await wake(c, child.id);
  await waitingForCancel(runId, workspace);
  const queued = (await comment(c, child.id, 'before you stop: use the staging database')).body;
  const holdId = await pause(c, parent.id);
  expect(await settled(runId)).toMatchObject({ status: 'cancelled' });
  const released = await h.request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {});
  const resumedId = released.body.resumed[0].runId as string;
  expect(await settled(resumedId)).toMatchObject({ status: 'succeeded' });
  const prompts = promptsSeen(workspace);
  // the interrupted turn, the continuation's resume prompt, then the message: one session
  expect(prompts).toHaveLength(3);
  expect(new Set(prompts.map((p) => p.sessionId)).size).toBe(1);
  expect(prompts[1].text).toContain('continues your own session');
  expect(prompts[2].text).toContain('use the staging database');
  const row = await h.services.db.comment.findUniqueOrThrow({ where: { id: queued.id } });
  expect([row.messageForRunId, row.deliveredToRunId]).toEqual([runId, resumedId]);
});

test('ten concurrent releases of a hold over a preserved acp run: one 200, one continuation of the session', async () => {
  const { c, workspace, parent, child, runId, holdId } = await pausedMidTurn('block-clean');
  expect(await settled(runId)).toMatchObject({ status: 'cancelled' });
  const results = await Promise.all(
    Array.from({ length: 10 }, () =>
      h.request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {}),
    ),
  );
  expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
  const resumedId = results.find((r) => r.status === 200)!.body.resumed[0].runId as string;
  expect(await settled(resumedId)).toMatchObject({ status: 'succeeded' });
  const runs = await h.services.db.run.findMany({ where: { issueId: child.id } });
  expect(runs.map((r) => r.id).sort()).toEqual([runId, resumedId].sort());
  expect(Object.values(fixtureSessions(workspace))).toEqual([{ cwd: workspace, loads: 1, prompts: 2 }]);
});

const cancelsSeen = (workspace: string) => {
  const file = path.join(workspace, '.acp-fixture-cancels.log');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
};

test("with messages: interrupt, a person's comment cancels the turn under way and is its session's next prompt, once, in order", async () => {
  const c = await seedCompany(h);
  // the turn would wait for its go forever: only the interrupt ends it
  const { workspace, child } = await acpIssue(
    c,
    'wait-go',
    { TREEWARDEN_ACP_MESSAGE_POLL_MS: '200' },
    {
      messages: 'interrupt',
    },
  );
  const runId = await wake(c, child.id);
  await eventually('the turn under way', async () =>
    journalOf(runId, workspace).some((l) => l.text === 'waiting for go'),
  );
  const first = (await comment(c, child.id, 'first: stop and use the staging database')).body;
  const second = (await comment(c, child.id, 'second: and ping the reviewer')).body;
  expect(second.message).toMatchObject({ forRunId: runId });
  expect(await settled(runId)).toMatchObject({ status: 'succeeded', exitCode: 0 });
  const journal = journalOf(runId, workspace);
  expect(journal.filter((l) => l.kind === 'interrupt')).toHaveLength(1);
  expect(journal.find((l) => l.kind === 'turn_end')).toMatchObject({ stopReason: 'cancelled' });
  const [sessionId] = Object.keys(fixtureSessions(workspace));
  expect(cancelsSeen(workspace)).toEqual([sessionId]);
  // the wake's prompt, then the messages in the same session: each in exactly one prompt, the first before the second
  const prompts = promptsSeen(workspace);
  expect(new Set(prompts.map((p) => p.sessionId))).toEqual(new Set([sessionId]));
  const all = prompts
    .slice(1)
    .map((p) => p.text)
    .join('\n');
  for (const m of [first, second]) expect(all.split(m.id)).toHaveLength(2);
  expect(all.indexOf(first.id)).toBeLessThan(all.indexOf(second.id));
  expect(prompts[0].text).not.toContain(first.id);
  const rows = await h.services.db.comment.findMany({ where: { issueId: child.id } });
  expect(rows.map((r) => r.deliveredToRunId)).toEqual([runId, runId]);
  expect(existsSync(path.join(workspace, '.acp-fixture-go'))).toBe(false);
});

test('a comment while the run waits for its retry is queued for it; one posted after its last claim, before its end, is no message to it: none stranded', async () => {
  const c = await seedCompany(h);
  // the agent takes 1.5 s to exit once its supervisor is done: the run is still running then
  const { workspace, child } = await acpIssue(c, 'wait-go', { ACP_FIXTURE_LINGER_MS: '1500' });
  const runId = await wake(c, child.id);
  await eventually('the turn under way', async () =>
    journalOf(runId, workspace).some((l) => l.text === 'waiting for go'),
  );
  // a live run by the domain's definition (LIVE_RUN_STATUSES) takes messages, a scheduled retry included
  await h.services.db.run.update({ where: { id: runId }, data: { status: 'scheduled_retry' } });
  const queued = (await comment(c, child.id, 'while the retry waits: use the staging database')).body;
  await h.services.db.run.update({ where: { id: runId }, data: { status: 'running' } });
  expect(queued.message).toMatchObject({ forRunId: runId });
  writeFileSync(path.join(workspace, '.acp-fixture-go'), '');
  // the message's turn ended and the last claim found none: the run takes no more, though it is still running
  await eventually(
    'the last claim',
    async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).acpMessagesClosedAt !== null,
  );
  const late = (await comment(c, child.id, 'after the last claim')).body;
  expect(await settled(runId)).toMatchObject({ status: 'succeeded' });
  const run = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
  expect(new Date(late.createdAt).getTime()).toBeLessThan(run.finishedAt!.getTime());
  expect(late.message).toBeNull();
  const rows = await h.services.db.comment.findMany({ where: { issueId: child.id }, orderBy: { createdAt: 'asc' } });
  expect(rows.map((r) => [r.id, r.messageForRunId, r.deliveredToRunId])).toEqual([
    [queued.id, runId, runId],
    [late.id, null, null],
  ]);
  const prompts = promptsSeen(workspace);
  expect(prompts.map((p) => p.text.split(queued.id).length - 1)).toEqual([0, 1]);
});
