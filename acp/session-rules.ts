/**
 * The session file's rules: which ACP session a run continues, what is recorded before its first prompt, and the
 * checkpoint a clean stop leaves. A session is bound to the workspace and the agent's command line (and the host
 * when known): one recorded for another is never loaded; the run falls back, once, to a new session and says why.
 */
import type { InitializeResponse } from '@agentclientprotocol/sdk';
import type { Checkpoint } from '../domain/checkpoint';

/** How a session is named in a checkpoint (`session.acp`) and bound. */
export interface AcpSessionRef {
  sessionId: string;
  /** the workspace's real path */
  cwd: string;
  /** the agent's command line: the command, then its arguments */
  command: string[];
  host?: string;
}

export type SessionOrigin = 'new' | 'loaded' | 'resumed';

export type FallbackReason =
  'other_cwd' | 'other_command' | 'other_host' | 'not_advertised' | 'load_failed' | 'malformed_checkpoint';

export interface Fallback {
  reason: FallbackReason;
  /** the session that was not continued, when the checkpoint named one */
  sessionId: string | null;
  detail?: string;
}

/** The session file (`TREEWARDEN_ACP_SESSION_FILE`), written before the first prompt. */
export interface SessionRecord extends AcpSessionRef {
  version: 1;
  runId: string | null;
  origin: SessionOrigin;
  fallback: Fallback | null;
  recordedAt: string;
}

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string');

const asRecord = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** An `AcpSessionRef` from untrusted JSON, or null when it has not that shape. */
export function sessionRefOf(value: unknown): AcpSessionRef | null {
  const v = asRecord(value);
  if (!v || typeof v.sessionId !== 'string' || v.sessionId === '' || typeof v.cwd !== 'string') return null;
  if (!isStringArray(v.command) || (v.host !== undefined && typeof v.host !== 'string')) return null;
  return {
    sessionId: v.sessionId,
    cwd: v.cwd,
    command: [...v.command],
    ...(typeof v.host === 'string' ? { host: v.host } : {}),
  };
}

export type PreviousSession =
  { kind: 'none' } | { kind: 'found'; ref: AcpSessionRef } | { kind: 'malformed'; sessionId: string | null };

/**
 * The session a run is to continue: the `checkpoint` treewarden puts in a resumed run's directive (its context file)
 * is the one the interrupted run's supervisor wrote, `{"resumable": true, "session": {"acp": {...}}}`.
 */
export function previousSessionOf(context: unknown): PreviousSession {
  const checkpoint = asRecord(asRecord(context)?.checkpoint);
  if (!checkpoint) return { kind: 'none' };
  const acp = asRecord(checkpoint.session)?.acp;
  if (acp === undefined) return { kind: 'none' };
  const ref = sessionRefOf(acp);
  if (ref) return { kind: 'found', ref };
  const id = asRecord(acp)?.sessionId;
  return { kind: 'malformed', sessionId: typeof id === 'string' ? id : null };
}

export interface AgentSessionCapabilities {
  loadSession: boolean;
  resume: boolean;
}

/** What the agent's `initialize` answer advertises for continuing a session. */
export const sessionCapabilitiesOf = (init: InitializeResponse): AgentSessionCapabilities => ({
  loadSession: init.agentCapabilities?.loadSession === true,
  resume: Boolean(init.agentCapabilities?.sessionCapabilities?.resume),
});

export type SessionPlan =
  | { method: 'session/new'; fallback: Fallback | null }
  | { method: 'session/resume' | 'session/load'; sessionId: string };

const sameCommand = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((s, i) => s === b[i]);

/**
 * How this run gets its session: `session/resume` (no replay) when the agent advertises it, else `session/load`, of
 * the previous session when it is bound to this workspace, command line and host; else `session/new`, with the
 * reason a previous session was not continued. A failed load falls back once (`fallbackAfterFailedLoad`).
 */
export function planSession(
  previous: PreviousSession,
  current: Omit<AcpSessionRef, 'sessionId'>,
  caps: AgentSessionCapabilities,
): SessionPlan {
  if (previous.kind === 'none') return { method: 'session/new', fallback: null };
  if (previous.kind === 'malformed')
    return { method: 'session/new', fallback: { reason: 'malformed_checkpoint', sessionId: previous.sessionId } };
  const { ref } = previous;
  const fallback = (reason: FallbackReason, detail: string): SessionPlan => ({
    method: 'session/new',
    fallback: { reason, sessionId: ref.sessionId, detail },
  });
  if (ref.cwd !== current.cwd)
    return fallback('other_cwd', `recorded for ${ref.cwd}, this run works in ${current.cwd}`);
  if (!sameCommand(ref.command, current.command))
    return fallback(
      'other_command',
      `recorded for \`${ref.command.join(' ')}\`, this run starts \`${current.command.join(' ')}\``,
    );
  if (ref.host !== undefined && current.host !== undefined && ref.host !== current.host)
    return fallback('other_host', `recorded on ${ref.host}, this run is on ${current.host}`);
  if (caps.resume) return { method: 'session/resume', sessionId: ref.sessionId };
  if (caps.loadSession) return { method: 'session/load', sessionId: ref.sessionId };
  return fallback('not_advertised', 'the agent advertises neither session/load nor session/resume');
}

export const fallbackAfterFailedLoad = (sessionId: string, error: string): Fallback => ({
  reason: 'load_failed',
  sessionId,
  detail: error,
});

export function sessionRecord(
  ref: AcpSessionRef,
  origin: SessionOrigin,
  fallback: Fallback | null,
  runId: string | null,
  at: Date,
): SessionRecord {
  return { version: 1, ...ref, runId, origin, fallback, recordedAt: at.toISOString() };
}

/** What a clean stop writes to `TREEWARDEN_CHECKPOINT_FILE`: treewarden hands it to the continuation's directive. */
export function checkpointFor(ref: AcpSessionRef): Checkpoint {
  return { resumable: true, session: { acp: { ...ref, command: [...ref.command] } } };
}
