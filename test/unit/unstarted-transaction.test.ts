/**
 * @module A transaction that could not start (P2028: no pooled connection in time) is tried again, since it did
 * nothing; any other failure, and one that keeps not starting, is the caller's (db/unstarted-transaction.ts).
 */
import { Prisma } from '../../db/prisma';
import { couldNotStart, untilStarted } from '../../db/unstarted-transaction';

const unstarted = () =>
  new Prisma.PrismaClientKnownRequestError('Transaction API error: Unable to start a transaction in the given time.', {
    code: 'P2028',
    clientVersion: 'test',
  });
const closed = () =>
  new Prisma.PrismaClientKnownRequestError('Transaction API error: Transaction already closed', {
    code: 'P2028',
    clientVersion: 'test',
  });

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('only a transaction that never started counts as not started', () => {
  expect(couldNotStart(unstarted())).toBe(true);
  expect(couldNotStart(closed())).toBe(false);
  expect(couldNotStart(new Error('Unable to start a transaction in the given time.'))).toBe(false);
});

test('a transaction that could not start is tried again until it does', async () => {
  let attempts = 0;
  const result = untilStarted(async () => {
    attempts++;
    if (attempts < 3) throw unstarted();
    return 'committed';
  });
  await jest.advanceTimersByTimeAsync(10_000);
  await expect(result).resolves.toBe('committed');
  expect(attempts).toBe(3);
});

test('another failure is thrown at once, and one that never starts after four attempts', async () => {
  let attempts = 0;
  await expect(
    untilStarted(async () => {
      attempts++;
      throw closed();
    }),
  ).rejects.toThrow('already closed');
  expect(attempts).toBe(1);

  attempts = 0;
  const never = untilStarted(async () => {
    attempts++;
    throw unstarted();
  });
  const settled = never.catch((error: unknown) => error);
  await jest.advanceTimersByTimeAsync(60_000);
  expect(couldNotStart(await settled)).toBe(true);
  expect(attempts).toBe(4);
});
