/**
 * A transaction that could not start (Prisma's P2028: no pooled connection within `maxWait`) did nothing, so trying
 * it again is always safe. Used where a failure would cost more than a wait: a run's last step before its agent
 * spawns, whose failure fails the run (found by the soak on a loaded host, its pool busy for more than 10 s).
 */
import { Prisma } from './prisma';

const ATTEMPTS = 4;
const BACKOFF_MS = 1_000;

export function couldNotStart(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2028'
    ? /unable to start a transaction/i.test(error.message)
    : false;
}

/** Runs `transaction`, again (up to four attempts in all, a growing pause between) while it could not start. */
export async function untilStarted<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      if (attempt >= ATTEMPTS || !couldNotStart(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS * attempt));
    }
  }
}
