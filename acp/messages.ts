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

/** The prompt of the messages queued for this run's issue, journaled; null when none is queued. */
export async function nextMessagesPrompt(access: LedgerAccess, journal: Journal): Promise<ContentBlock[] | null> {
  const messages = await takeMessages(access);
  if (messages.length === 0) return null;
  journal.write({ kind: 'messages', ids: messages.map((m) => m.id), text: messages.map((m) => m.body).join(' | ') });
  const text = messages
    .map((m) => `A person commented on your issue (comment ${m.id}, ${m.createdAt}):\n${m.body}`)
    .join('\n\n');
  return [{ type: 'text', text }];
}
