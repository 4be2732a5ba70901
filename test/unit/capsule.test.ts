/**
 * @module Recovery capsules are deterministic for the same facts and never exceed 8 KiB serialized,
 * for every kind of continuation, however large the earlier run's record; trimming keeps the newest.
 */
import {
  buildCapsule,
  CAPSULE_MAX_BYTES,
  capsuleBytes,
  type CapsuleFacts,
  type CapsuleKind,
  type PredecessorFacts,
} from '../../domain/capsule';

const at = (i: number) => new Date(Date.UTC(2026, 11, 1, 0, 0, i)).toISOString();

function predecessor(size: number): PredecessorFacts {
  return {
    runId: 'run-1',
    issueId: 'issue-1',
    status: 'cancelled',
    stopKind: 'operator_hold',
    exitCode: null,
    error: 'x'.repeat(size * 10),
    verdict: 'terminal-clean',
    stopOutcome: 'unknown_outcome',
    failureState: null,
    startedAt: at(0),
    finishedAt: at(1),
    journal: Array.from({ length: size }, (_, i) => `step ${i} ${'j'.repeat(150)}`),
    checkpoint: size > 10 ? { resumable: true, session: 's'.repeat(size * 20) } : { resumable: true, session: 's-1' },
    outputTail: Array.from({ length: size }, (_, i) => `line ${i}`).join('\n'),
    jobs: Array.from({ length: size }, (_, i) => ({
      id: `job-${i}`,
      kind: i % 2 ? 'monitor' : 'shell_job',
      command: `tail -F /var/log/${i}.log`,
      status: 'stopped',
      exitCode: null,
      stopReason: 'owner_terminal',
      verdict: 'terminal-clean',
    })),
    evidence: Array.from({ length: size }, (_, i) => ({ check: `check ${i}`, passed: i % 3 !== 0, at: at(i) })),
  };
}

function facts(kind: CapsuleKind, size: number): CapsuleFacts {
  return {
    kind,
    issueId: 'issue-1',
    predecessor: kind === 'watchdog_review' ? null : predecessor(size),
    openBlockers: Array.from({ length: Math.ceil(size / 10) }, (_, i) => ({
      id: `b-${i}`,
      issueId: 'issue-1',
      cause: 'stopped_mid_turn_unknown_outcome',
      nextAction: 'review what the run did, then resolve',
    })),
    review:
      kind === 'watchdog_review'
        ? {
            watchdogId: 'w-1',
            watchedIssueId: 'root',
            fingerprint: 'f'.repeat(64),
            stoppedLeaves: Array.from({ length: size }, (_, i) => ({
              issueId: `leaf-${i}`,
              title: `leaf ${i} ${'t'.repeat(80)}`,
              status: 'todo',
              blockerIssueIds: [],
              executionBlockerIds: [],
              pendingInteractionIds: [],
              lastRun: { runId: `r-${i}`, status: 'failed', exitCode: 1, failureState: 'inspected', finishedAt: at(i) },
            })),
          }
        : null,
  };
}

const KINDS: CapsuleKind[] = ['resume_after_hold', 'resume_after_reconciliation', 'replacement', 'watchdog_review'];

describe.each(KINDS)('%s', (kind) => {
  test.each([1, 10, 100, 2000])('with %i entries per list it stays within 8 KiB', (size) => {
    const capsule = buildCapsule(facts(kind, size));
    expect(capsuleBytes(capsule)).toBeLessThanOrEqual(CAPSULE_MAX_BYTES);
    expect(capsule.kind).toBe(kind);
  });

  test('the same facts give the same capsule, byte for byte', () => {
    expect(JSON.stringify(buildCapsule(facts(kind, 500)))).toBe(JSON.stringify(buildCapsule(facts(kind, 500))));
  });
});

test('small facts are kept whole, nothing omitted', () => {
  const capsule = buildCapsule(facts('resume_after_hold', 3));
  expect(capsule.omitted).toEqual({});
  expect(capsule.previousRun).toMatchObject({
    runId: 'run-1',
    stopKind: 'operator_hold',
    verdict: 'terminal-clean',
    journal: [expect.stringMatching(/^step 0/), expect.stringMatching(/^step 1/), expect.stringMatching(/^step 2/)],
  });
  expect(capsule.previousRun!.jobs).toHaveLength(3);
  expect(capsule.previousRun!.checkpoint).toEqual({ resumable: true, session: 's-1' });
});

test('trimming keeps the newest journal lines, jobs, evidence, leaves and output, and counts what it left out', () => {
  const big = buildCapsule(facts('replacement', 2000));
  const prev = big.previousRun!;
  expect(Array.isArray(prev.journal) && prev.journal.at(-1)).toMatch(/^step 1999 /);
  expect(prev.jobs.at(-1)?.id ?? 'all omitted').toMatch(/job-1999|all omitted/);
  expect(prev.outputTail!.endsWith('line 1999')).toBe(true);
  expect(big.omitted.journalLines).toBeGreaterThan(0);
  const review = buildCapsule(facts('watchdog_review', 2000));
  expect(review.review!.stoppedLeaves.at(-1)!.issueId).toBe('leaf-1999');
  expect(review.omitted.stoppedLeaves).toBeGreaterThan(0);
});

test('a journal on another host is said to be there, not shown empty', () => {
  const f = facts('resume_after_hold', 3);
  f.predecessor!.journal = null;
  expect(buildCapsule(f).previousRun!.journal).toBe('not on this host');
});
