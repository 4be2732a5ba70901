/**
 * @module Unit: the ACP supervisor's session file and stop rules (acp/session-rules.ts, acp/stop-rules.ts): which
 * session a run continues (bound to its workspace, command line and host), the fallback once, and when a stop
 * earns a checkpoint.
 */
import { readCheckpoint } from '../../domain/checkpoint';
import {
  checkpointFor,
  planSession,
  previousSessionOf,
  sessionRecord,
  sessionRefOf,
  type AcpSessionRef,
} from '../../acp/session-rules';
import { stopVerdict, type StopFacts } from '../../acp/stop-rules';

const REF: AcpSessionRef = { sessionId: 's-1', cwd: '/ws', command: ['claude-agent-acp'], host: 'h1' };
const HERE = { cwd: '/ws', command: ['claude-agent-acp'], host: 'h1' };
const LOAD = { loadSession: true, resume: false };
const context = (ref: unknown) => ({ interruptedRunId: 'r0', checkpoint: { resumable: true, session: { acp: ref } } });

test('the checkpoint a clean stop writes is one treewarden reads, and names the session back', () => {
  const checkpoint = checkpointFor(REF);
  expect(readCheckpoint({ text: JSON.stringify(checkpoint), writtenAtMs: 2 }, 1)).toEqual({ ok: true, checkpoint });
  expect(previousSessionOf({ checkpoint })).toEqual({ kind: 'found', ref: REF });
});

test.each<[string, unknown, ReturnType<typeof previousSessionOf>]>([
  ['no context', null, { kind: 'none' }],
  ['a context without a checkpoint', { note: 1 }, { kind: 'none' }],
  ['a checkpoint of another kind of agent', { checkpoint: { resumable: true, session: 'x' } }, { kind: 'none' }],
  ['a malformed acp session', context({ sessionId: 's-9', cwd: 3 }), { kind: 'malformed', sessionId: 's-9' }],
  ['an empty command line', context({ ...REF, command: [] }), { kind: 'malformed', sessionId: 's-1' }],
  ['no id at all', context({}), { kind: 'malformed', sessionId: null }],
  ['one without a host', context({ ...REF, host: undefined }), { kind: 'found', ref: { ...REF, host: undefined } }],
])('previousSessionOf: %s', (_case, value, expected) => {
  const found = previousSessionOf(value);
  expect(JSON.parse(JSON.stringify(found))).toEqual(JSON.parse(JSON.stringify(expected)));
});

test('sessionRefOf copies, so a later change of the source does not reach it', () => {
  const source = { ...REF, command: ['a', 'b'] };
  const ref = sessionRefOf(source)!;
  source.command.push('c');
  expect(ref.command).toEqual(['a', 'b']);
});

test.each<[string, Parameters<typeof planSession>, ReturnType<typeof planSession>]>([
  ['nothing to continue', [{ kind: 'none' }, HERE, LOAD], { method: 'session/new', fallback: null }],
  [
    'a bound session, load advertised',
    [{ kind: 'found', ref: REF }, HERE, LOAD],
    { method: 'session/load', sessionId: 's-1' },
  ],
  [
    'resume preferred when advertised (no replay)',
    [{ kind: 'found', ref: REF }, HERE, { loadSession: true, resume: true }],
    { method: 'session/resume', sessionId: 's-1' },
  ],
  [
    'another workspace',
    [{ kind: 'found', ref: REF }, { ...HERE, cwd: '/other' }, LOAD],
    {
      method: 'session/new',
      fallback: { reason: 'other_cwd', sessionId: 's-1', detail: 'recorded for /ws, this run works in /other' },
    },
  ],
  [
    'another command line',
    [{ kind: 'found', ref: REF }, { ...HERE, command: ['codex-acp'] }, LOAD],
    {
      method: 'session/new',
      fallback: {
        reason: 'other_command',
        sessionId: 's-1',
        detail: 'recorded for `claude-agent-acp`, this run starts `codex-acp`',
      },
    },
  ],
  [
    'the same command with other arguments',
    [{ kind: 'found', ref: REF }, { ...HERE, command: ['claude-agent-acp', '--x'] }, LOAD],
    { method: 'session/new', fallback: expect.objectContaining({ reason: 'other_command' }) },
  ],
  [
    'another host',
    [{ kind: 'found', ref: REF }, { ...HERE, host: 'h2' }, LOAD],
    { method: 'session/new', fallback: expect.objectContaining({ reason: 'other_host' }) },
  ],
  [
    'a session recorded without a host is not refused for it',
    [{ kind: 'found', ref: { ...REF, host: undefined } }, { ...HERE, host: 'h2' }, LOAD],
    { method: 'session/load', sessionId: 's-1' },
  ],
  [
    'an agent that can neither load nor resume',
    [{ kind: 'found', ref: REF }, HERE, { loadSession: false, resume: false }],
    { method: 'session/new', fallback: expect.objectContaining({ reason: 'not_advertised', sessionId: 's-1' }) },
  ],
  [
    'a malformed checkpoint',
    [{ kind: 'malformed', sessionId: 's-9' }, HERE, LOAD],
    { method: 'session/new', fallback: { reason: 'malformed_checkpoint', sessionId: 's-9' } },
  ],
])('planSession: %s', (_case, args, expected) => {
  expect(planSession(...args)).toEqual(expected);
});

test('the session record carries the binding, its origin and the fallback', () => {
  const fallback = { reason: 'other_cwd' as const, sessionId: 's-0' };
  expect(sessionRecord(REF, 'new', fallback, 'run-1', new Date('2026-01-01T00:00:00Z'))).toEqual({
    version: 1,
    ...REF,
    runId: 'run-1',
    origin: 'new',
    fallback,
    recordedAt: '2026-01-01T00:00:00.000Z',
  });
});

const stop = (o: Partial<StopFacts>): StopFacts => ({
  phase: 'prompting',
  answer: { kind: 'stopped', stopReason: 'cancelled' },
  openToolCalls: [],
  ...o,
});

test.each<[string, StopFacts, { checkpoint: boolean; acknowledged: boolean }]>([
  ['acknowledged, nothing open', stop({}), { checkpoint: true, acknowledged: true }],
  ['acknowledged, a tool call open', stop({ openToolCalls: ['t1'] }), { checkpoint: false, acknowledged: true }],
  [
    'the turn ended on its own while the stop waited',
    stop({ phase: 'ended', answer: { kind: 'stopped', stopReason: 'end_turn' } }),
    { checkpoint: true, acknowledged: false },
  ],
  [
    'no answer in time',
    stop({ answer: { kind: 'no_answer', waitedMs: 10 } }),
    { checkpoint: false, acknowledged: false },
  ],
  ['the turn failed', stop({ answer: { kind: 'failed', error: 'gone' } }), { checkpoint: false, acknowledged: false }],
  [
    'before the session was recorded',
    stop({ phase: 'starting', answer: { kind: 'not_prompted' } }),
    { checkpoint: false, acknowledged: false },
  ],
  [
    'recorded, not yet prompted',
    stop({ phase: 'ready', answer: { kind: 'not_prompted' } }),
    { checkpoint: true, acknowledged: true },
  ],
])('stopVerdict: %s', (_case, facts, expected) => {
  expect(stopVerdict(facts)).toMatchObject(expected);
});

test('a stop with tool calls open names them', () => {
  expect(stopVerdict(stop({ openToolCalls: ['t1', 't2'] })).reason).toBe(
    'the agent acknowledged the cancel with tool calls open (t1, t2): their outcome is unknown',
  );
});
