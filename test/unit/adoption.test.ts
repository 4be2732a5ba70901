import { LET_GO_REASONS, parseExitStatus } from '../../domain/adoption';

describe('the exit status an adopting worker reads (an agent can write its run folder)', () => {
  test.each([
    ['0\n', 0],
    ['7', 7],
    ['143\n', 143],
    ['255', 255],
  ])('%j is status %d', (text, status) => {
    expect(parseExitStatus(text)).toBe(status);
  });

  test.each([null, '', '256', '-1', '1.5', '0 && rm -rf /', 'x', '1234'])('%j is no status', (text) => {
    expect(parseExitStatus(text)).toBeNull();
  });
});

test("a stop (the server's CANCELLED) is never a let-go; a shutdown, a timed-out or a vanished attempt is", () => {
  expect(LET_GO_REASONS.has('CANCELLED')).toBe(false);
  expect([...LET_GO_REASONS].sort()).toEqual(['NOT_FOUND', 'TIMED_OUT', 'WORKER_SHUTDOWN']);
});
