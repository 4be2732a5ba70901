/**
 * The demo company's ACP agent (`npm start` seeds it as `notes-writer`): a small agent that speaks the Agent Client
 * Protocol on stdio, built on @agentclientprotocol/sdk's agent side, so the demo shows an `acp` run without a model
 * or an API key. Each turn it plans, thinks for TREEWARDEN_DEMO_THINK_MS (20 s by default: time to pause it), then
 * appends a line to NOTES.md in its workspace through the client's `fs/write_text_file` and ends its turn. It
 * answers `session/cancel` at once with `cancelled` (so a pause while it thinks is preserved), and a continued
 * session (`session/load`) picks up where it was. Sessions are kept in `.demo-agent-sessions.json` in the workspace.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';

const THINK_MS = Number(process.env.TREEWARDEN_DEMO_THINK_MS ?? 20_000);
const store = path.join(process.cwd(), '.demo-agent-sessions.json');
type Sessions = Record<string, { cwd: string; turns: number }>;
const sessions = (): Sessions => (existsSync(store) ? (JSON.parse(readFileSync(store, 'utf8')) as Sessions) : {});
const keep = (all: Sessions) => writeFileSync(store, JSON.stringify(all, null, 2));
const cancels = new Map<string, () => void>();

const say = (client: acp.AgentContext, sessionId: string, text: string) =>
  client.notify('session/update', {
    sessionId,
    update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
  });

async function turn(client: acp.AgentContext, sessionId: string): Promise<acp.PromptResponse> {
  const all = sessions();
  const session = all[sessionId];
  if (!session) throw acp.RequestError.sessionNotFound(sessionId);
  session.turns++;
  keep(all);
  const notes = path.join(session.cwd, 'NOTES.md');
  await client.notify('session/update', {
    sessionId,
    update: {
      sessionUpdate: 'plan',
      entries: [{ content: 'add a line to NOTES.md', priority: 'high', status: 'in_progress' }],
    },
  });
  await say(client, sessionId, `turn ${session.turns} of session ${sessionId}: thinking for ${THINK_MS / 1000} s`);
  const cancelled = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), THINK_MS);
    cancels.set(sessionId, () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  cancels.delete(sessionId);
  if (cancelled) return { stopReason: 'cancelled' };
  const toolCallId = `notes-${session.turns}`;
  await client.notify('session/update', {
    sessionId,
    update: {
      sessionUpdate: 'tool_call',
      toolCallId,
      title: 'Append to NOTES.md',
      kind: 'edit',
      status: 'in_progress',
      locations: [{ path: notes }],
    },
  });
  const before = existsSync(notes) ? readFileSync(notes, 'utf8') : '';
  await client.request('fs/write_text_file', {
    sessionId,
    path: notes,
    content: `${before}- turn ${session.turns} of session ${sessionId}\n`,
  });
  await client.notify('session/update', {
    sessionId,
    update: { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' },
  });
  await say(client, sessionId, 'NOTES.md updated');
  return { stopReason: 'end_turn' };
}

const known = (sessionId: string, cwd: string) => {
  const session = sessions()[sessionId];
  if (!session || session.cwd !== cwd) throw acp.RequestError.sessionNotFound(sessionId);
  return {};
};

const app = acp
  .agent({ name: 'treewarden-demo-agent' })
  .onRequest('initialize', () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: true },
    agentInfo: { name: 'treewarden-demo-agent', version: '1' },
  }))
  .onRequest('session/new', ({ params }) => {
    const sessionId = randomUUID();
    keep({ ...sessions(), [sessionId]: { cwd: params.cwd, turns: 0 } });
    return { sessionId };
  })
  .onRequest('session/load', ({ params }) => known(params.sessionId, params.cwd))
  .onRequest('session/prompt', ({ params, client }) => turn(client, params.sessionId))
  .onNotification('session/cancel', ({ params }) => cancels.get(params.sessionId)?.());

const connection = app.connect(
  acp.ndJsonStream(
    Writable.toWeb(process.stdout) as unknown as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
  ),
);
void connection.closed.then(() => process.exit(0));
