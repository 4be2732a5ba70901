/**
 * @module Unit: run supervision verdicts, finding hashes and silence grading (domain/supervision.ts).
 */
import { createHash } from 'node:crypto';
import {
  DEFAULT_SILENCE_POLICY,
  findingHash,
  lastSignOfLife,
  silenceLevel,
  VERDICT_ACTIONS,
  verdictOf,
  type SilencePolicy,
  type SupervisionFacts,
  type Verdict,
} from '../../domain/supervision';

const VERDICTS = Object.keys(VERDICT_ACTIONS) as Verdict[];

describe('verdicts and their actions', () => {
  test('the closed union is exactly the nine documented verdicts', () => {
    expect([...VERDICTS].sort()).toEqual(
      [
        'failed-superseded',
        'failed-uninspected',
        'host-lost',
        'live-running',
        'monitor-orphaned',
        'silent-running',
        'stop-partial',
        'stop-pending',
        'terminal-clean',
      ].sort(),
    );
  });

  test('every verdict has its own non-empty action: no two verdicts are handled alike', () => {
    const actions = VERDICTS.map((v) => VERDICT_ACTIONS[v]);
    for (const action of actions) expect(action.trim()).not.toBe('');
    expect(new Set(actions).size).toBe(VERDICTS.length);
  });
});

describe('verdictOf', () => {
  /** A finished agent run that succeeded, with nothing left alive. */
  const FINISHED: SupervisionFacts = {
    kind: 'agent_run',
    active: false,
    failed: false,
    failureState: null,
    mustBeGone: true,
    survivors: 0,
    writersAlive: 0,
    leaseHeld: false,
    ownerTerminal: false,
    silence: 'ok',
    tombstone: false,
    unverifiedStop: null,
  };
  const RUNNING: Partial<SupervisionFacts> = { active: true, mustBeGone: false, leaseHeld: true };

  const CASES: [string, Partial<SupervisionFacts>, Verdict][] = [
    ['a running run that shows signs of life', RUNNING, 'live-running'],
    ['a running run gone suspiciously silent', { ...RUNNING, silence: 'suspicious' }, 'silent-running'],
    ['a running run gone critically silent', { ...RUNNING, silence: 'critical' }, 'silent-running'],
    ['a stopped run with a surviving process', { survivors: 1 }, 'stop-partial'],
    ['a stopped run with a writer still holding its workspace', { writersAlive: 1 }, 'stop-partial'],
    ['a failed run whose outcome is unknown', { failed: true, failureState: 'uninspected' }, 'failed-uninspected'],
    ['a failed run not yet reconciled', { failed: true, failureState: null }, 'failed-uninspected'],
    [
      'a failed run superseded by a verified replacement',
      { failed: true, failureState: 'superseded' },
      'failed-superseded',
    ],
    ['a failed run whose result was inspected', { failed: true, failureState: 'inspected' }, 'terminal-clean'],
    ['a failed run a person acknowledged', { failed: true, failureState: 'acknowledged' }, 'terminal-clean'],
    ['a finished run with nothing left', {}, 'terminal-clean'],
    [
      'a monitor still running for a terminal owner',
      { ...RUNNING, kind: 'monitor', ownerTerminal: true },
      'monitor-orphaned',
    ],
    [
      'a failed run whose tombstone proves nothing is left',
      { failed: true, failureState: 'uninspected', tombstone: true },
      'terminal-clean',
    ],
    [
      'a stopped run whose host has no live worker to verify the stop',
      { unverifiedStop: 'stop-pending' },
      'stop-pending',
    ],
    ['a stopped run whose host was declared lost', { unverifiedStop: 'host-lost' }, 'host-lost'],
  ];

  test.each(CASES)('%s: %s', (_case, facts, expected) => {
    expect(verdictOf({ ...FINISHED, ...facts })).toBe(expected);
  });

  test('the cases above reach every verdict', () => {
    expect(new Set(CASES.map(([, , v]) => v))).toEqual(new Set(VERDICTS));
  });

  test.each<[string, Partial<SupervisionFacts>, Verdict]>([
    [
      'an orphaned monitor is stopped, not graded as a partial stop',
      { ...RUNNING, kind: 'monitor', ownerTerminal: true, mustBeGone: true, survivors: 2 },
      'monitor-orphaned',
    ],
    [
      'a running job or run whose owner is terminal is not a monitor',
      { ...RUNNING, kind: 'shell_job', ownerTerminal: true },
      'live-running',
    ],
    ['a finished monitor is not orphaned', { kind: 'monitor', ownerTerminal: true }, 'terminal-clean'],
    ['a tombstone does not hide survivors of a stop', { survivors: 1, tombstone: true }, 'stop-partial'],
    [
      'a tombstone does not clear work whose lease is still held',
      { failed: true, failureState: 'uninspected', tombstone: true, leaseHeld: true },
      'failed-uninspected',
    ],
    [
      'a tombstone does not clear work with a live writer',
      { failed: true, failureState: 'uninspected', tombstone: true, writersAlive: 1, mustBeGone: false },
      'failed-uninspected',
    ],
    ['survivors of work that need not be gone yet are no partial stop', { ...RUNNING, survivors: 3 }, 'live-running'],
    [
      'a pending stop is never clean, even with no survivor in sight and a tombstone',
      { unverifiedStop: 'stop-pending', tombstone: true },
      'stop-pending',
    ],
    [
      'a lost host is not clean either, whatever its run reported before',
      { unverifiedStop: 'host-lost', failed: true, failureState: 'inspected' },
      'host-lost',
    ],
  ])('precedence: %s', (_case, facts, expected) => {
    expect(verdictOf({ ...FINISHED, ...facts })).toBe(expected);
  });
});

describe('findingHash', () => {
  test('the same finding hashes the same whatever its key order, also in nested objects', () => {
    expect(findingHash('stop-partial', { survivors: [101, 102], escalatedTo: 'terminal-clean' })).toBe(
      findingHash('stop-partial', { escalatedTo: 'terminal-clean', survivors: [101, 102] }),
    );
    expect(findingHash('stop-partial', { survivors: [{ pid: 1, command: 'sleep' }] })).toBe(
      findingHash('stop-partial', { survivors: [{ command: 'sleep', pid: 1 }] }),
    );
  });

  test.each<[string, Verdict, Record<string, unknown>]>([
    ['another verdict', 'silent-running', { level: 'critical' }],
    ['another value', 'stop-partial', { level: 'suspicious' }],
    ['another key', 'stop-partial', { state: 'critical' }],
    ['an extra key', 'stop-partial', { level: 'critical', more: true }],
    ['a value of another type', 'stop-partial', { level: ['critical'] }],
  ])('a finding with %s hashes differently', (_what, verdict, details) => {
    expect(findingHash(verdict, details)).not.toBe(findingHash('stop-partial', { level: 'critical' }));
  });

  test('findings that differ only inside a nested object hash differently (they are not deduplicated away)', () => {
    expect(findingHash('stop-partial', { survivors: [{ pid: 1, command: 'sleep' }] })).not.toBe(
      findingHash('stop-partial', { survivors: [{ pid: 2, command: 'yes' }] }),
    );
    expect(findingHash('stop-partial', { attempt: { verdict: 'stop-partial' } })).not.toBe(
      findingHash('stop-partial', { attempt: { verdict: 'terminal-clean' } }),
    );
  });

  test('flat details keep their stored format: sha256 of "<verdict>\\n<JSON with sorted keys>", so recorded hashes still deduplicate', () => {
    const expected = createHash('sha256')
      .update('stop-partial\n{"escalatedTo":"terminal-clean","survivors":[7,3]}')
      .digest('hex');
    expect(findingHash('stop-partial', { survivors: [7, 3], escalatedTo: 'terminal-clean' })).toBe(expected);
  });
});

describe('lastSignOfLife', () => {
  const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 12, minute));
  const none = { apiActivityAt: null, journalPulseAt: null, processActiveAt: null, outputModifiedAt: null };

  test('no signal at all: no sign of life', () => {
    expect(lastSignOfLife(none)).toBeNull();
  });

  test.each(['apiActivityAt', 'journalPulseAt', 'processActiveAt'] as const)(
    'the latest primary signal wins when %s is the latest',
    (latest) => {
      const signals = {
        apiActivityAt: at(1),
        journalPulseAt: at(2),
        processActiveAt: at(3),
        outputModifiedAt: null,
        [latest]: at(9),
      };
      expect(lastSignOfLife(signals)).toEqual(at(9));
    },
  );

  test('output mtime is ignored when any primary signal exists, even when it is newer', () => {
    expect(lastSignOfLife({ ...none, journalPulseAt: at(1), outputModifiedAt: at(30) })).toEqual(at(1));
  });

  test('output mtime is the fallback when nothing better exists', () => {
    expect(lastSignOfLife({ ...none, outputModifiedAt: at(30) })).toEqual(at(30));
  });
});

describe('silenceLevel', () => {
  const POLICY: SilencePolicy = { suspiciousAfterMs: 1_000, criticalAfterMs: 3_000, continueRearmMs: 10_000 };
  const STARTED = new Date('2025-01-01T00:00:00.000Z');
  const after = (ms: number) => new Date(STARTED.getTime() + ms);
  const noDecision = { kind: null, until: null };

  test('the default policy is the documented 5 / 15 / 30 minutes', () => {
    expect(DEFAULT_SILENCE_POLICY).toEqual({
      suspiciousAfterMs: 5 * 60_000,
      criticalAfterMs: 15 * 60_000,
      continueRearmMs: 30 * 60_000,
    });
  });

  test.each<[number, string]>([
    [0, 'ok'],
    [POLICY.suspiciousAfterMs - 1, 'ok'],
    [POLICY.suspiciousAfterMs, 'suspicious'],
    [POLICY.criticalAfterMs - 1, 'suspicious'],
    [POLICY.criticalAfterMs, 'critical'],
    [POLICY.criticalAfterMs * 100, 'critical'],
  ])('silent for %i ms since the last sign of life: %s', (silentMs, expected) => {
    const lastSign = after(5_000);
    expect(silenceLevel(new Date(lastSign.getTime() + silentMs), lastSign, STARTED, noDecision, POLICY)).toBe(expected);
  });

  test('without any sign of life, silence counts from the start of the run', () => {
    expect(silenceLevel(after(POLICY.suspiciousAfterMs - 1), null, STARTED, noDecision, POLICY)).toBe('ok');
    expect(silenceLevel(after(POLICY.suspiciousAfterMs), null, STARTED, noDecision, POLICY)).toBe('suspicious');
  });

  test('a dismissed run is ok for good', () => {
    expect(
      silenceLevel(after(POLICY.criticalAfterMs * 100), null, STARTED, { kind: 'dismiss', until: null }, POLICY),
    ).toBe('ok');
  });

  test.each(['snooze', 'continue'] as const)(
    'a %s decision keeps the run ok until its time, then grading resumes',
    (kind) => {
      const now = after(POLICY.criticalAfterMs * 2);
      expect(silenceLevel(now, null, STARTED, { kind, until: new Date(now.getTime() + 1) }, POLICY)).toBe('ok');
      expect(silenceLevel(now, null, STARTED, { kind, until: now }, POLICY)).toBe('critical');
      expect(silenceLevel(now, null, STARTED, { kind, until: new Date(now.getTime() - 1) }, POLICY)).toBe('critical');
    },
  );
});
