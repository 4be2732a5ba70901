/**
 * How a run's session is obtained (issue 46): continued by `session/resume` or `session/load` when its plan says so
 * (acp/session-rules.ts), else, or when the agent refuses the load, opened once with `session/new`; never a retry.
 */
import type { ClientConnection } from '@agentclientprotocol/sdk';
import type { ClientState } from './client';
import type { Journal } from './files';
import { fallbackAfterFailedLoad, type Fallback, type SessionOrigin, type SessionPlan } from './session-rules';

export class StepFailed extends Error {}
export class AgentGone extends Error {}

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export interface SessionOpener {
  connection: ClientConnection;
  state: ClientState;
  journal: Journal;
  workspace: string;
  /** a start-up request, bounded (TREEWARDEN_ACP_START_TIMEOUT_MS), failing with StepFailed or AgentGone */
  step: <T>(name: string, request: Promise<T>) => Promise<T>;
}

export interface OpenedSession {
  sessionId: string;
  origin: SessionOrigin;
  fallback: Fallback | null;
}

export async function openSession(o: SessionOpener, plan: SessionPlan): Promise<OpenedSession> {
  const agent = o.connection.agent;
  const cwd = o.workspace;
  let fallback: Fallback | null = null;
  if (plan.method === 'session/new') fallback = plan.fallback;
  else {
    o.state.sessionId = plan.sessionId;
    o.state.loading = true;
    try {
      const params = { sessionId: plan.sessionId, cwd, mcpServers: [] };
      const request =
        plan.method === 'session/load'
          ? agent.request('session/load', params)
          : agent.request('session/resume', params);
      await o.step(plan.method, request);
      return { sessionId: plan.sessionId, origin: plan.method === 'session/load' ? 'loaded' : 'resumed', fallback };
    } catch (error) {
      // an agent that is gone, or silent, gets no second request: only a refused load falls back
      if (error instanceof StepFailed || error instanceof AgentGone || o.connection.signal.aborted) throw error;
      fallback = fallbackAfterFailedLoad(plan.sessionId, messageOf(error));
    } finally {
      o.state.loading = false;
    }
    o.state.sessionId = null;
  }
  if (fallback)
    o.journal.write({
      kind: 'session_fallback',
      reason: fallback.reason,
      sessionId: fallback.sessionId,
      text: fallback.detail,
    });
  const created = await o.step('session/new', agent.request('session/new', { cwd, mcpServers: [] }));
  const sessionId: unknown = created?.sessionId;
  if (typeof sessionId !== 'string' || sessionId === '')
    throw new StepFailed('the agent answered session/new without a session id');
  o.state.sessionId = sessionId;
  return { sessionId, origin: 'new', fallback };
}
