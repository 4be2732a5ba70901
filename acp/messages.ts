/**
 * Messages to the agent (issue 46): a person's comment posted while this run's issue had its acp run live is queued
 * by the server. When a turn ends, the supervisor takes the queued ones (`POST /api/runs/:id/acp-messages/claim`,
 * with the run's token: each goes to one run, once, oldest first) and sends them as the next prompt of the same
 * session. A continuation takes what its interrupted run left queued, after its resume prompt.
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';
import type { Journal } from './files';
import { callRunApi, ClaimFailed, type LedgerAccess } from './ledger';

interface QueuedMessage {
  id: string;
  body: string;
  createdAt: string;
}

async function takeMessages(access: LedgerAccess): Promise<QueuedMessage[]> {
  const what = 'the queued messages could not be taken';
  // `last`: when none is queued the run ends, so the server closes it to messages in the same transaction
  const { status, body } = await callRunApi(access, 'POST', 'acp-messages/claim', what, { last: true });
  if (status === 409) throw new ClaimFailed(`${what}: 409 ${body?.error?.message ?? ''}`);
  return (body?.items as QueuedMessage[] | undefined) ?? [];
}

/**
 * The `interrupt` policy's watch over a turn: every `everyMs` it asks how many messages are queued
 * (`GET /api/runs/:id/acp-messages`, no sign of life); true once one is, false once `turn` settles first. A poll that
 * fails is asked again at the next interval. It takes nothing: the claim comes after the turn is cancelled.
 */
export async function messageQueued(access: LedgerAccess, everyMs: number, turn: Promise<unknown>): Promise<boolean> {
  let over = false;
  const settled = turn.then(
    () => (over = true),
    () => (over = true),
  );
  while (!over) {
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, everyMs).unref())]);
    if (over) return false;
    try {
      const { status, body } = await callRunApi(access, 'GET', 'acp-messages', 'the queued messages were not counted');
      if (status === 200 && typeof body?.queued === 'number' && body.queued > 0) return !over;
    } catch {
      // asked again at the next interval
    }
  }
  return false;
}

/** The messages queued for this run's issue, taken, and their prompt, journaled; null when none is queued. */
async function nextMessages(
  access: LedgerAccess,
  journal: Journal,
): Promise<{ ids: string[]; prompt: ContentBlock[] } | null> {
  const messages = await takeMessages(access);
  if (messages.length === 0) return null;
  const ids = messages.map((m) => m.id);
  journal.write({ kind: 'messages', ids, text: messages.map((m) => m.body).join(' | ') });
  const text = messages
    .map((m) => `A person commented on your issue (comment ${m.id}, ${m.createdAt}):\n${m.body}`)
    .join('\n\n');
  return { ids, prompt: [{ type: 'text', text }] };
}

/**
 * Messages taken when a stop came in while the claim was answered: no prompt goes out once a stop is in, so they go
 * back to the queue (`POST /api/runs/:id/acp-messages/return`), for its continuation or next run.
 */
async function returnMessages(access: LedgerAccess, journal: Journal, ids: string[]): Promise<void> {
  try {
    await callRunApi(access, 'POST', 'acp-messages/return', 'the taken messages could not be returned', { ids });
    journal.write({ kind: 'messages_returned', ids });
  } catch (error) {
    journal.write({ kind: 'messages_unreturned', ids, text: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * The prompt of the messages queued for this run's issue, taken; null when none is queued. Taken as a stop came in
 * (`stopping()`), they are returned unprompted.
 */
export async function nextMessagesPrompt(
  access: LedgerAccess,
  journal: Journal,
  stopping: () => boolean,
): Promise<ContentBlock[] | null> {
  const next = await nextMessages(access, journal);
  if (!next || !stopping()) return next?.prompt ?? null;
  await returnMessages(access, journal, next.ids);
  return null;
}
