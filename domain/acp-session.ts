/**
 * The ACP session ledger's rule (issue 46): at most one live run uses a session. A run's supervisor claims its
 * session before the first prompt; the claim is refused while another run that claimed it is still live, so two
 * runs never drive one conversation at once (Paperclip #5421). Pure: runs/acp-sessions.ts reads the facts.
 */
import { LIVE_RUN_STATUSES, type RunStatus } from './statuses';

export const ACP_SESSION_ORIGINS = ['new', 'loaded', 'resumed'] as const;
export type AcpSessionOrigin = (typeof ACP_SESSION_ORIGINS)[number];

/** The run that claimed the session last, and its status now (null: that run is gone, retention removed it). */
export interface SessionHolder {
  runId: string;
  status: RunStatus | null;
}

export type ClaimDecision = { kind: 'claim' } | { kind: 'in_use'; runId: string };

export function decideSessionClaim(holder: SessionHolder | null, runId: string): ClaimDecision {
  if (holder === null || holder.runId === runId) return { kind: 'claim' };
  if (holder.status !== null && LIVE_RUN_STATUSES.includes(holder.status))
    return { kind: 'in_use', runId: holder.runId };
  return { kind: 'claim' };
}
