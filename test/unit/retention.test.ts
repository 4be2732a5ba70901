/**
 * @module Unit: retention's rules by age (domain/retention.ts): the cutoffs a pass deletes before, the minimum life of
 * every key that dedupes a retry and of a released hold's claims.
 */
import {
  addRemovals,
  DEDUPE_MIN_AGE_MS,
  noRemovals,
  resumeRetryHorizonMs,
  retentionCutoffs,
} from '../../domain/retention';

const DAY = 24 * 60 * 60_000;
const now = new Date('2026-12-01T00:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);

test('finished rows go after the retention; dedupe keys and released holds keep at least a day', () => {
  expect(retentionCutoffs(now, 30, 20)).toEqual({
    finished: ago(30 * DAY),
    dedupe: ago(30 * DAY),
    releasedHold: ago(30 * DAY),
  });
  // zero days: only live state is kept, but a retry arriving within the day still finds its key
  expect(retentionCutoffs(now, 0, 20)).toEqual({
    finished: now,
    dedupe: ago(DEDUPE_MIN_AGE_MS),
    releasedHold: ago(DAY),
  });
});

test("a released hold's claims live as long as its workflow may still retry owed resumes", () => {
  // 1 s doubling to 5 minutes: 1+2+...+256 s, then 300 s each
  expect(resumeRetryHorizonMs(0)).toBe(0);
  expect(resumeRetryHorizonMs(3)).toBe(7_000);
  expect(resumeRetryHorizonMs(20)).toBe(511_000 + 11 * 300_000);
  const manyRetries = 1_000; // about 3.5 days of retries
  expect(retentionCutoffs(now, 1, manyRetries).releasedHold).toEqual(ago(resumeRetryHorizonMs(manyRetries)));
});

test('counts add up per kind', () => {
  const total = addRemovals(addRemovals(noRemovals(), { runs: 2, findings: 3 }), { runs: 1 });
  expect(total).toMatchObject({ runs: 3, findings: 3, runFolders: 0, notifications: 0 });
});
