/** Keeps a long activity visibly alive, so a worker that dies is noticed within one heartbeat timeout. */
import { Context } from '@temporalio/activity';

/**
 * Runs `work` while heartbeating at a quarter of the activity's heartbeat timeout (the SDK
 * throttles anyway). Work that blocks the event loop longer than the timeout is retried; every
 * activity wrapped here is idempotent, so that costs time, not correctness.
 */
export async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  if (!timeoutMs) return work();
  ctx.heartbeat();
  const beat = setInterval(() => ctx.heartbeat(), Math.max(100, Math.floor(timeoutMs / 4)));
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
