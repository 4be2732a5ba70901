/**
 * @module The per-run ACP supervisor (acp/, issue 46) as treewarden will run it: `bin/treewarden-acp` as a child
 * process whose cwd is a temporary workspace, with a process run's variables pointing into a temporary run folder,
 * against the fixture agent built on the SDK's agent side (test/fixtures/acp-agent.ts). No Temporal, no database.
 * Each test waits for events (a journal line, the supervisor's exit), never for a fixed time.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { readCheckpoint } from '../domain/checkpoint';
import { ACP_FIXTURE } from '../testing/acp';

const root = path.join(__dirname, '..');
const BIN = path.join(root, 'bin', 'treewarden-acp');
const AGENT = [ACP_FIXTURE.command, ...ACP_FIXTURE.args];
const WAIT_MS = 30_000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

interface Run {
  workspace: string;
  runDir: string;
  journal: string;
  checkpoint: string;
  context: string;
  session: string;
  pid: number;
  exited: Promise<Exit>;
}

const scratch = mkdtempSync(path.join(tmpdir(), 'acp-supervisor-'));
const live = new Set<number>();
let runs = 0;

/**
 * The session ledger as treewarden's API serves it (`PUT /api/runs/:id/acp-session`), on loopback: it records each
 * claim with its token and answers 200, or 409 `session_in_use` for a session listed in `inUse`; and the activity
 * reports (`PUT /api/runs/:id/acp-activity`), kept in `reports`.
 */
const ledger = {
  url: '',
  claims: [] as { runId: string; token: string | undefined; body: Record<string, unknown> }[],
  inUse: new Set<string>(),
  reports: [] as { runId: string; body: Record<string, unknown> }[],
  /** the next claim of messages is held until `answer` and then takes `items` */
  heldClaim: null as null | { items: unknown[]; arrived: () => void; answer: Promise<void> },
  returned: [] as { runId: string; ids: unknown }[],
};
const ledgerServer = createServer((request, response) => {
  let text = '';
  request.on('data', (chunk: Buffer) => (text += chunk.toString()));
  request.on('end', () => {
    const runId = /^\/api\/runs\/([^/]+)\/acp-session$/.exec(request.url ?? '')?.[1];
    const body = JSON.parse(text || '{}') as Record<string, unknown>;
    // no message is queued for these runs, but for a held claim's
    if (request.method === 'POST' && /^\/api\/runs\/[^/]+\/acp-messages\/claim$/.test(request.url ?? '')) {
      const held = ledger.heldClaim;
      ledger.heldClaim = null;
      held?.arrived();
      const answer = JSON.stringify({ items: held?.items ?? [] });
      return void (held?.answer ?? Promise.resolve()).then(() =>
        response.writeHead(200, { 'content-type': 'application/json' }).end(answer),
      );
    }
    const returnedBy = /^\/api\/runs\/([^/]+)\/acp-messages\/return$/.exec(request.url ?? '')?.[1];
    if (request.method === 'POST' && returnedBy) {
      ledger.returned.push({ runId: returnedBy, ids: body.ids });
      return response.writeHead(200, { 'content-type': 'application/json' }).end('{"returned":1}');
    }
    const reported = /^\/api\/runs\/([^/]+)\/acp-activity$/.exec(request.url ?? '')?.[1];
    if (request.method === 'PUT' && reported) {
      ledger.reports.push({ runId: reported, body });
      return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ runId: reported }));
    }
    if (request.method !== 'PUT' || !runId) return response.writeHead(404).end();
    ledger.claims.push({ runId, token: request.headers.authorization, body });
    const answer = ledger.inUse.has(String(body.sessionId))
      ? {
          status: 409,
          body: { error: { code: 'conflict', details: { reason: 'session_in_use', runId: 'run-other' } } },
        }
      : { status: 200, body: { ...body, runId, claims: 1, claimedAt: new Date().toISOString() } };
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
});
beforeAll(async () => {
  await new Promise<void>((resolve) => ledgerServer.listen(0, '127.0.0.1', resolve));
  ledger.url = `http://127.0.0.1:${(ledgerServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const pid of live) process.kill(pid, 'SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
  await new Promise((resolve) => ledgerServer.close(resolve));
});

function newWorkspace(): string {
  const workspace = path.join(scratch, `ws-${++runs}`);
  mkdirSync(workspace);
  return realpathSync(workspace);
}

function start(o: { workspace?: string; mode?: string; context?: unknown; env?: Record<string, string> } = {}): Run {
  const workspace = o.workspace ?? newWorkspace();
  const runDir = path.join(scratch, `run-${++runs}`);
  mkdirSync(runDir);
  const files = {
    journal: path.join(runDir, 'journal.log'),
    checkpoint: path.join(runDir, 'checkpoint.json'),
    context: path.join(runDir, 'context.json'),
    session: path.join(runDir, 'acp-session.json'),
  };
  writeFileSync(files.context, JSON.stringify(o.context ?? { note: 'context-note-42' }));
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TREEWARDEN_')));
  const child = spawn(BIN, ['--', ...AGENT], {
    cwd: workspace,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...inherited,
      TREEWARDEN_RUN_ID: `run-${runs}`,
      TREEWARDEN_JOURNAL_FILE: files.journal,
      TREEWARDEN_CHECKPOINT_FILE: files.checkpoint,
      TREEWARDEN_CONTEXT_FILE: files.context,
      TREEWARDEN_API_URL: ledger.url,
      TREEWARDEN_RUN_TOKEN: 'twr_not_a_real_token',
      TREEWARDEN_ISSUE_ID: 'issue-7',
      TREEWARDEN_AGENT_ID: 'agent-3',
      TREEWARDEN_WAKE_REASON: 'manual_wake',
      ACP_FIXTURE_MODE: o.mode ?? 'work',
      ACP_FIXTURE_SESSION_FILE: files.session,
      ...o.env,
    },
  });
  live.add(child.pid!);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // 'close': the process has exited and its stderr is drained (the agent shares it, so it is gone too)
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => {
      live.delete(child.pid!);
      resolve({ code, signal, stderr });
    }),
  );
  return { workspace, runDir, ...files, pid: child.pid!, exited };
}

type Line = Record<string, unknown>;

const journalOf = (run: Run): Line[] =>
  existsSync(run.journal)
    ? readFileSync(run.journal, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line)
    : [];

const ofKind = (run: Run, kind: string) => journalOf(run).filter((l) => l.kind === kind);

async function waitFor<T>(what: string, probe: () => T | undefined | null | false): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const found = probe();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const waitForMessage = (run: Run, text: string) =>
  waitFor(`"${text}" in the journal`, () =>
    journalOf(run).find((l) => l.kind === 'agent_message_chunk' && l.text === text),
  );

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
const fixtureSessions = (workspace: string) =>
  json(path.join(workspace, '.acp-fixture-sessions.json')) as Record<string, { loads: number; prompts: number }>;
const prompts = (workspace: string) =>
  readFileSync(path.join(workspace, '.acp-fixture-prompts.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { sessionId: string; text: string; sessionFileAtPrompt: Line | null });

/** A session stopped cleanly: its checkpoint, workspace and id. */
async function cleanlyStopped() {
  const run = start({ mode: 'block-clean' });
  await waitForMessage(run, 'waiting for cancel');
  process.kill(run.pid, 'SIGTERM');
  const exit = await run.exited;
  expect(exit.code).toBe(75); // stopped at a known point: the status the worker trusts the checkpoint with;
  const checkpoint = json(run.checkpoint);
  const sessionId = (json(run.session) as { sessionId: string }).sessionId;
  return { run, checkpoint, sessionId };
}

test('a prompt turn: end_turn, exit 0, the turn journaled, the file written, the session recorded before it', async () => {
  const run = start();
  const exit = await run.exited;
  expect(exit).toMatchObject({ code: 0, signal: null });

  const session = json(run.session);
  const sessionId = session.sessionId as string;
  expect(session).toMatchObject({ version: 1, cwd: run.workspace, command: AGENT, origin: 'new', fallback: null });
  // the fixture saw the session file, naming its session, when the prompt arrived
  const [prompt] = prompts(run.workspace);
  expect(prompt.sessionFileAtPrompt).toMatchObject({ sessionId, cwd: run.workspace });
  expect(prompt.sessionId).toBe(sessionId);
  expect(prompt.text).toContain('issue issue-7');
  expect(prompt.text).toContain('wake reason: manual_wake');
  expect(prompt.text).toContain('context-note-42');
  expect(prompt.text).not.toContain('twr_not_a_real_token');
  // claimed in the ledger with the run's token before the prompt: the session, its binding, how it was obtained
  const [claimed] = ledger.claims.filter((c) => c.body.sessionId === sessionId);
  expect(ledger.claims.filter((c) => c.body.sessionId === sessionId)).toEqual([
    {
      runId: expect.stringMatching(/^run-/),
      token: 'Bearer twr_not_a_real_token',
      body: { sessionId, cwd: run.workspace, command: AGENT, host: hostname(), origin: 'new' },
    },
  ]);

  expect(readFileSync(path.join(run.workspace, 'hello.txt'), 'utf8')).toBe(`hello from ${sessionId}\n`);
  const lines = journalOf(run);
  expect(lines.map((l) => [l.kind, l.status ?? l.decision ?? l.event ?? l.stopReason ?? null])).toEqual([
    ['initialized', null],
    ['session', 'new'],
    ['session_claim', null],
    ['plan', null],
    ['agent_message_chunk', null],
    ['tool_call', 'pending'],
    ['permission', 'allowed'],
    ['tool_call_update', 'in_progress'],
    ['fs', null],
    ['tool_call_update', 'completed'],
    ['agent_message_chunk', null],
    ['usage_update', null],
    ['turn_end', 'end_turn'],
  ]);
  // what the run shows, reported before the supervisor exited: its last report is the turn's whole activity
  const reports = ledger.reports.filter((r) => r.runId === claimed.runId);
  expect(reports.at(-1)?.body).toMatchObject({
    toolCalls: [{ toolCallId: 'write-1', status: 'completed' }],
    lastMessage: 'done',
    permissions: [{ toolCallId: 'write-1', decision: 'allowed' }],
    usage: { tokens: 150, cost: { amount: 0.25, currency: 'USD' } },
  });
  expect(lines.find((l) => l.kind === 'plan')).toMatchObject({ text: '[in_progress] write hello.txt' });
  expect(lines.find((l) => l.kind === 'tool_call')).toMatchObject({ toolCallId: 'write-1', text: 'Write hello.txt' });
  expect(lines.find((l) => l.kind === 'fs')).toMatchObject({ method: 'fs/write_text_file', path: 'hello.txt' });
  expect(lines.at(-1)).toMatchObject({ openToolCalls: [] });
  for (const line of readFileSync(run.journal, 'utf8').split('\n')) expect(line.length).toBeLessThanOrEqual(600);
  expect(existsSync(run.checkpoint)).toBe(false);
});

test('a stop that meets a claim of messages in flight: no prompt goes out, the taken messages are returned', async () => {
  let arrived!: () => void;
  let answer!: () => void;
  const claimArrived = new Promise<void>((resolve) => (arrived = resolve));
  const message = { id: randomUUID(), body: 'please also tidy up', createdAt: new Date().toISOString() };
  ledger.heldClaim = { items: [message], arrived, answer: new Promise<void>((resolve) => (answer = resolve)) };
  const run = start();
  await claimArrived; // the first turn ended, and its claim is under way
  process.kill(run.pid, 'SIGTERM');
  await waitFor('the stop to be in', () => ofKind(run, 'stop').length > 0);
  answer();
  const exit = await run.exited;
  expect(exit.code).toBe(75); // stopped between turns: known, preserved
  expect(ledger.returned).toContainEqual({ runId: expect.stringMatching(/^run-/), ids: [message.id] });
  expect(ofKind(run, 'messages_returned')).toEqual([expect.objectContaining({ ids: [message.id] })]);
  // the agent saw one prompt, the wake's: the message was never sent
  expect(prompts(run.workspace).map((p) => p.text)).toEqual([expect.not.stringContaining('please also tidy up')]);
});

test('a session another live run holds: the supervisor never prompts, and exits 5 naming the holder', async () => {
  const first = await cleanlyStopped();
  ledger.inUse.add(first.sessionId);
  const run = start({ workspace: first.run.workspace, context: { checkpoint: first.checkpoint } });
  const exit = await run.exited;
  expect(exit.code).toBe(5);
  expect(exit.stderr).toContain('in use by live run run-other');
  expect(ofKind(run, 'session_claim')).toEqual([
    expect.objectContaining({ sessionId: first.sessionId, answer: 'in_use', byRunId: 'run-other' }),
  ]);
  // loaded, but prompted only by the first run
  expect(fixtureSessions(first.run.workspace)[first.sessionId]).toMatchObject({ loads: 1, prompts: 1 });
  expect(existsSync(run.checkpoint)).toBe(false);
});

test('a hostile agent: reads and writes outside the workspace, terminals elsewhere and foreign sessions refused; no crash', async () => {
  const workspace = newWorkspace();
  const outside = path.join(path.dirname(workspace), `outside-${runs}`);
  mkdirSync(outside);
  writeFileSync(path.join(path.dirname(workspace), 'outside.txt'), 'not yours');
  writeFileSync(path.join(outside, 'secret.txt'), 'not yours either');
  symlinkSync(outside, path.join(workspace, 'escape'));
  writeFileSync(path.join(workspace, 'inside.txt'), 'yours');
  const run = start({ workspace, mode: 'hostile' });
  const exit = await run.exited;
  expect(exit).toMatchObject({ code: 0, signal: null });

  const got = json(path.join(workspace, '.acp-fixture-hostile.json'));
  for (const key of ['passwd', 'dotdot', 'relative', 'symlink', 'write'])
    expect(got[key]).toMatchObject({
      ok: false,
      code: -32602,
      message: expect.stringContaining('outside the workspace'),
    });
  expect(got.inside).toEqual({ ok: true, value: { content: 'yours' } });
  // terminals: inside the workspace, with the agent's variables; another cwd or another terminal is refused
  expect(got.terminalOutside).toMatchObject({ ok: false, code: -32602, message: expect.stringContaining('outside') });
  expect(got.terminalForeign).toMatchObject({ ok: false, code: -32602, message: expect.stringContaining('not open') });
  expect(got.terminal).toMatchObject({
    ok: true,
    value: { exit: { exitCode: 0, signal: null }, output: `${workspace}\nextra-42\n` },
  });
  expect(got.permission).toEqual({ ok: true, value: { outcome: { outcome: 'selected', optionId: 'no' } } });
  expect(got.otherSession).toMatchObject({ ok: false, code: -32002 });
  expect(existsSync(path.join(path.dirname(workspace), 'written.txt'))).toBe(false);

  expect(ofKind(run, 'fs_refused').map((l) => l.path)).toEqual([
    '/etc/passwd',
    `${workspace}/../outside.txt`,
    '../outside.txt',
    path.join(workspace, 'escape', 'secret.txt'),
    `${workspace}/sub/../../written.txt`,
    '/etc', // the terminal's cwd (terminal/create)
  ]);
  expect(ofKind(run, 'permission')).toEqual([
    expect.objectContaining({ toolCallId: 'outside-1', decision: 'rejected', optionId: 'no' }),
  ]);
  expect(readFileSync(run.journal, 'utf8')).not.toMatch(/root:|not yours/);
  // the line that is not JSON and the update of no known kind were answered or dropped; the turn went on
  expect(ofKind(run, 'turn_end')).toEqual([expect.objectContaining({ stopReason: 'end_turn' })]);
});

test('SIGTERM between tool calls: the cancel is acknowledged and the checkpoint names the session', async () => {
  const { run, checkpoint, sessionId } = await cleanlyStopped();
  expect(readFileSync(path.join(run.workspace, '.acp-fixture-cancels.log'), 'utf8')).toBe(`${sessionId}\n`);
  expect(checkpoint).toEqual({
    resumable: true,
    session: { acp: { sessionId, cwd: run.workspace, command: AGENT, host: hostname() } },
  });
  // treewarden's own reading of a checkpoint accepts it
  expect(readCheckpoint({ text: readFileSync(run.checkpoint, 'utf8'), writtenAtMs: Date.now() }, 0).ok).toBe(true);
  expect(ofKind(run, 'stop')).toEqual([
    expect.objectContaining({ acknowledged: true, checkpoint: true, openToolCalls: [] }),
  ]);
});

test('SIGTERM with a tool call open: acknowledged, but no checkpoint (an unknown outcome)', async () => {
  const run = start({ mode: 'block-open' });
  await waitForMessage(run, 'waiting for cancel');
  process.kill(run.pid, 'SIGTERM');
  expect((await run.exited).code).toBe(143);
  expect(existsSync(run.checkpoint)).toBe(false);
  expect(ofKind(run, 'stop')).toEqual([
    expect.objectContaining({ acknowledged: true, checkpoint: false, openToolCalls: ['long-1'] }),
  ]);
});

test('SIGTERM to an agent that ignores the cancel: no checkpoint after the bounded wait, and the agent is ended', async () => {
  const run = start({ mode: 'ignore-cancel', env: { TREEWARDEN_ACP_CANCEL_WAIT_MS: '1000' } });
  await waitForMessage(run, 'ignoring cancel');
  process.kill(run.pid, 'SIGTERM');
  const exit = await run.exited;
  expect(exit.code).toBe(143);
  expect(existsSync(run.checkpoint)).toBe(false);
  expect(ofKind(run, 'stop')).toEqual([
    expect.objectContaining({ acknowledged: false, checkpoint: false, text: 'no answer to session/cancel in 1000 ms' }),
  ]);
});

test('SIGTERM while a terminal command runs: the command ends with the supervisor', async () => {
  const run = start({ mode: 'terminal-block' });
  await waitForMessage(run, 'waiting for cancel');
  const pidFile = path.join(run.workspace, '.acp-fixture-terminal.pid');
  const pid = Number(await waitFor('the terminal command', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8')));
  expect(() => process.kill(pid, 0)).not.toThrow(); // running, the supervisor's child, in the workspace
  process.kill(run.pid, 'SIGTERM');
  expect((await run.exited).code).toBe(75);
  expect(ofKind(run, 'terminal')).toHaveLength(1);
  await waitFor('the terminal command to be gone', () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
});

test('an agent that dies mid-turn: a non-zero exit that names its exit code', async () => {
  const run = start({ mode: 'die' });
  const exit = await run.exited;
  expect(exit.code).toBe(4);
  expect(exit.stderr).toContain('the agent exited with code 7');
  expect(ofKind(run, 'failed')).toEqual([expect.objectContaining({ phase: 'prompting' })]);
});

test('a checkpointed session is continued with session/load; one bound to another workspace falls back once', async () => {
  const { run: first, checkpoint, sessionId } = await cleanlyStopped();
  const workspace = first.workspace;

  const second = start({ workspace, context: { interruptedRunId: 'run-1', checkpoint } });
  expect((await second.exited).code).toBe(0);
  expect(ofKind(second, 'session')).toEqual([expect.objectContaining({ event: 'loaded', sessionId, replayed: 2 })]);
  expect(ofKind(second, 'session_fallback')).toEqual([]);
  expect(json(second.session)).toMatchObject({ sessionId, origin: 'loaded' });
  // the fixture loaded the same session and answered in it; it created none
  expect(fixtureSessions(workspace)).toEqual({ [sessionId]: expect.objectContaining({ loads: 1, prompts: 2 }) });
  expect(prompts(workspace)[1]).toMatchObject({
    sessionId,
    text: expect.stringContaining('continues your own session'),
  });
  expect(readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe(`hello from ${sessionId}\n`);

  const acp = (checkpoint.session as { acp: Record<string, unknown> }).acp;
  const moved = { ...checkpoint, session: { acp: { ...acp, cwd: '/somewhere/else' } } };
  const third = start({ workspace, context: { checkpoint: moved } });
  expect((await third.exited).code).toBe(0);
  expect(ofKind(third, 'session_fallback')).toEqual([
    expect.objectContaining({ reason: 'other_cwd', sessionId, text: expect.stringContaining('/somewhere/else') }),
  ]);
  const [opened] = ofKind(third, 'session');
  expect(opened).toMatchObject({ event: 'new' });
  expect(opened.sessionId).not.toBe(sessionId);
  expect(json(third.session)).toMatchObject({ origin: 'new', fallback: { reason: 'other_cwd', sessionId } });
  expect(fixtureSessions(workspace)[sessionId].loads).toBe(1); // never asked to load it
  expect(prompts(workspace)[2].text).toContain(`previous session ${sessionId} could not be continued (other_cwd`);
});

test('a session the agent cannot load falls back once to a new one; a resume is used when advertised', async () => {
  const { run: first, checkpoint, sessionId } = await cleanlyStopped();
  const acp = (checkpoint.session as { acp: Record<string, unknown> }).acp;
  const unknown = { ...checkpoint, session: { acp: { ...acp, sessionId: 'no-such-session' } } };
  const lost = start({ workspace: first.workspace, context: { checkpoint: unknown } });
  expect((await lost.exited).code).toBe(0);
  expect(ofKind(lost, 'session_fallback')).toEqual([
    expect.objectContaining({ reason: 'load_failed', sessionId: 'no-such-session' }),
  ]);
  expect(ofKind(lost, 'session')).toEqual([expect.objectContaining({ event: 'new' })]);

  const resumed = start({ workspace: first.workspace, context: { checkpoint }, env: { ACP_FIXTURE_RESUME: '1' } });
  expect((await resumed.exited).code).toBe(0);
  expect(ofKind(resumed, 'session')).toEqual([expect.objectContaining({ event: 'resumed', sessionId })]);
  expect(fixtureSessions(first.workspace)[sessionId].loads).toBe(1);
});
