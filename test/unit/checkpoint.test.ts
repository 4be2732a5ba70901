/**
 * @module Unit: verified continuation (domain/checkpoint.ts). A stop is `preserved` only when the
 * SIGTERM stop was clean and the agent wrote a resumable checkpoint after the stop was observed.
 */
import {
  preservedCheckpoint,
  readCheckpoint,
  recordOutcome,
  stopOutcomeOf,
  type CheckpointReading,
} from '../../domain/checkpoint';

const STOP_AT = 1_000;
const file = (text: string | null, writtenAtMs = STOP_AT + 5) => ({ text, writtenAtMs });

test.each<[string, ReturnType<typeof file> | null, CheckpointReading]>([
  [
    'a resumable object written after the stop',
    file('{"resumable":true,"session":"s-42"}'),
    { ok: true, checkpoint: { resumable: true, session: 's-42' } },
  ],
  [
    'written in the same instant as the stop mark',
    file('{"resumable":true}', STOP_AT),
    { ok: true, checkpoint: { resumable: true } },
  ],
  ['no file', null, { ok: false, problem: 'missing' }],
  [
    'written before the stop (a stale checkpoint says nothing about this stop)',
    file('{"resumable":true}', STOP_AT - 1),
    { ok: false, problem: 'written_before_stop' },
  ],
  ['too large to read', file(null), { ok: false, problem: 'too_large' }],
  ['invalid JSON', file('{"resumable":tru'), { ok: false, problem: 'invalid_json' }],
  ['empty', file(''), { ok: false, problem: 'invalid_json' }],
  ['JSON but not an object', file('[true]'), { ok: false, problem: 'not_an_object' }],
  ['null', file('null'), { ok: false, problem: 'not_an_object' }],
  ['resumable false', file('{"resumable":false,"session":"s"}'), { ok: false, problem: 'not_resumable' }],
  ['resumable as a string, not true', file('{"resumable":"true"}'), { ok: false, problem: 'not_resumable' }],
])('readCheckpoint: %s', (_case, found, expected) => {
  expect(readCheckpoint(found, STOP_AT)).toEqual(expected);
});

const GOOD: CheckpointReading = { ok: true, checkpoint: { resumable: true, session: 's-1' } };

test.each([
  [
    'entered, clean SIGTERM stop, good checkpoint → preserved',
    { adapterEntered: true, sigtermVerdict: 'terminal-clean' as const, checkpoint: GOOD },
    { outcome: 'preserved', checkpoint: { resumable: true, session: 's-1' } },
  ],
  [
    'a survivor after SIGTERM (stop-partial) → unknown, whatever the checkpoint says',
    { adapterEntered: true, sigtermVerdict: 'stop-partial' as const, checkpoint: GOOD },
    { outcome: 'unknown_outcome', reason: 'stop_partial' },
  ],
  [
    'clean stop but no checkpoint → unknown',
    {
      adapterEntered: true,
      sigtermVerdict: 'terminal-clean' as const,
      checkpoint: { ok: false, problem: 'missing' } as const,
    },
    { outcome: 'unknown_outcome', reason: 'missing' },
  ],
  [
    "an acp run's good checkpoint its supervisor vouched for (exit 75) → preserved",
    { adapterEntered: true, sigtermVerdict: 'terminal-clean' as const, checkpoint: GOOD, supervisorVouched: true },
    { outcome: 'preserved', checkpoint: { resumable: true, session: 's-1' } },
  ],
  [
    "an acp run's good checkpoint its supervisor did not vouch for (the agent wrote it) → unknown",
    { adapterEntered: true, sigtermVerdict: 'terminal-clean' as const, checkpoint: GOOD, supervisorVouched: false },
    { outcome: 'unknown_outcome', reason: 'not_vouched_by_supervisor' },
  ],
  [
    'stopped before the adapter → before_adapter',
    { adapterEntered: false, sigtermVerdict: 'stop-partial' as const, checkpoint: GOOD },
    { outcome: 'before_adapter' },
  ],
])('stopOutcomeOf: %s', (_case, facts, expected) => {
  expect(stopOutcomeOf(facts)).toEqual(expected);
});

test('only a preserved outcome recorded in a stop result yields a checkpoint', () => {
  const preserved = {
    verdict: 'terminal-clean',
    ...recordOutcome({ outcome: 'preserved', checkpoint: { resumable: true, session: 'x' } }),
  };
  expect(preservedCheckpoint(preserved)).toEqual({ resumable: true, session: 'x' });
  expect(
    preservedCheckpoint({
      verdict: 'terminal-clean',
      ...recordOutcome({ outcome: 'unknown_outcome', reason: 'missing' }),
    }),
  ).toBeNull();
  expect(preservedCheckpoint({ verdict: 'terminal-clean' })).toBeNull(); // recorded before issue 14
  expect(preservedCheckpoint(null)).toBeNull();
});
