/**
 * Under a burst of updates to one workflow on a loaded worker, the SDK's core can complete a workflow task without
 * reading an update that arrived with it ("unprocessed protocol messages" in its log). The server then rejects that
 * update as `UnprocessedUpdate` ("... Probably, Workflow Update is not supported by the worker") and never delivers
 * it again. Such an update never ran, so it is sent again under a new update id: its caller gets the workflow's
 * answer (a release's report, or the validator's "not active"), never a 503. Seen with 20 concurrent releases of
 * one hold (test/tree-holds.test.ts, test/continuation.test.ts).
 */
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';

/** more than a burst of one hold's releases ever needed; then the rejection is passed on */
const ATTEMPTS = 5;

export function isUnprocessedUpdate(error: unknown): boolean {
  return (
    error instanceof WorkflowUpdateFailedError &&
    error.cause instanceof ApplicationFailure &&
    error.cause.type === 'UnprocessedUpdate'
  );
}

/** `send(updateId)` with `updateId` first, then with `<updateId>-resent-<n>` while the server reports it unread */
export async function sendUntilProcessed<T>(updateId: string, send: (updateId: string) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send(attempt === 1 ? updateId : `${updateId}-resent-${attempt}`);
    } catch (error) {
      if (!isUnprocessedUpdate(error) || attempt >= ATTEMPTS) throw error;
    }
  }
}
