/**
 * @module Unit: the ACP supervisor's command line and settings (acp/config.ts) and the owed prompt (acp/prompt.ts).
 */
import { agentEnvironment, DEFAULTS, supervisorConfig } from '../../acp/config';
import { buildPrompt, CONTEXT_MAX_CHARS, type WakeFacts } from '../../acp/prompt';

const ENV = { TREEWARDEN_JOURNAL_FILE: '/runs/r1/journal.log', TREEWARDEN_RUN_ID: 'r1' };

test("the agent command follows --; the session file defaults to the run folder (the journal's)", () => {
  const parsed = supervisorConfig(['--', 'claude-agent-acp', '--verbose'], ENV, '/ws');
  expect(parsed).toEqual({
    ok: true,
    config: expect.objectContaining({
      command: ['claude-agent-acp', '--verbose'],
      workspace: '/ws',
      runId: 'r1',
      sessionFile: '/runs/r1/acp-session.json',
      checkpointFile: null,
      ...DEFAULTS,
      unlocated: 'allow',
      ledger: null, // no API and token: run by hand
    }),
  });
  const run = { ...ENV, TREEWARDEN_API_URL: 'http://127.0.0.1:9/', TREEWARDEN_RUN_TOKEN: 'twr_x' };
  expect(supervisorConfig(['a'], run, '/ws')).toMatchObject({
    ok: true,
    config: { ledger: { apiUrl: 'http://127.0.0.1:9/', runToken: 'twr_x', runId: 'r1' } },
  });
  expect(supervisorConfig(['agent'], ENV, '/ws')).toMatchObject({ ok: true, config: { command: ['agent'] } });
});

test.each<[string, string[], Record<string, string>, string]>([
  ['no command', ['--'], ENV, 'no agent command given'],
  ['no journal', ['--', 'a'], {}, 'TREEWARDEN_JOURNAL_FILE is not set'],
  ['a bad wait', ['--', 'a'], { ...ENV, TREEWARDEN_ACP_CANCEL_WAIT_MS: '10s' }, 'whole number of milliseconds'],
  ['a bad policy', ['--', 'a'], { ...ENV, TREEWARDEN_ACP_UNLOCATED_TOOLS: 'maybe' }, 'allow or reject'],
])('refused: %s', (_case, argv, env, message) => {
  const parsed = supervisorConfig(argv, env, '/ws');
  expect(parsed.ok).toBe(false);
  if (!parsed.ok) expect(parsed.error).toContain(message);
});

test('settings and the session file come from TREEWARDEN_ACP_*', () => {
  const env = {
    ...ENV,
    TREEWARDEN_ACP_SESSION_FILE: '/elsewhere/s.json',
    TREEWARDEN_ACP_CANCEL_WAIT_MS: '2500',
    TREEWARDEN_ACP_UNLOCATED_TOOLS: 'reject',
  };
  expect(supervisorConfig(['--', 'a'], env, '/ws')).toMatchObject({
    ok: true,
    config: { sessionFile: '/elsewhere/s.json', cancelWaitMs: 2500, unlocated: 'reject' },
  });
});

test("the agent does not inherit the supervisor's own variables (the checkpoint is the supervisor's)", () => {
  const env = agentEnvironment({
    PATH: '/bin',
    TREEWARDEN_RUN_TOKEN: 't',
    TREEWARDEN_CHECKPOINT_FILE: '/c',
    TREEWARDEN_ACP_SESSION_FILE: '/s',
    UNSET: undefined,
  });
  expect(env).toEqual({ PATH: '/bin', TREEWARDEN_RUN_TOKEN: 't' });
});

const wake = (o: Partial<WakeFacts> = {}): WakeFacts => ({
  issueId: 'i-1',
  wakeReason: 'manual_wake',
  runId: 'r-1',
  workspace: '/ws',
  context: '{"a":1}\n',
  capsule: null,
  origin: 'new',
  fallback: null,
  ...o,
});

const text = (f: WakeFacts) => {
  const [block] = buildPrompt(f);
  return block.type === 'text' ? block.text : '';
};

test('the owed prompt names the issue, the wake and the context; never the token', () => {
  const t = text(wake());
  expect(t).toContain('issue i-1 (wake reason: manual_wake, run r-1)');
  expect(t).toContain('```json\n{"a":1}\n```');
  expect(t).toContain('TREEWARDEN_RUN_TOKEN environment variable');
  expect(t).not.toContain('Recovery capsule');
  expect(buildPrompt(wake())).toHaveLength(1);
});

test('a continuation says so; a fallback names the session and why; a capsule is embedded', () => {
  expect(text(wake({ origin: 'loaded' }))).toContain('continues your own session');
  const fallen = text(
    wake({ fallback: { reason: 'load_failed', sessionId: 's-1', detail: 'not found' }, capsule: '{"v":1}' }),
  );
  expect(fallen).toContain('previous session s-1 could not be continued (load_failed: not found)');
  expect(fallen).toContain('Recovery capsule (TREEWARDEN_CAPSULE_FILE)');
  expect(fallen).toContain('{"v":1}');
});

test('a large context is bounded, saying how much was left out', () => {
  const t = text(wake({ context: 'x'.repeat(CONTEXT_MAX_CHARS + 500) }));
  expect(t).toContain('… (500 more characters in the file)');
  expect(t.length).toBeLessThan(CONTEXT_MAX_CHARS + 1_000);
});
