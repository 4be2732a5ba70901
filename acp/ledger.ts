/**
 * The session ledger's client side (issue 46): before its first prompt the supervisor claims its session with the
 * run's own token (`PUT /api/runs/:runId/acp-session`), so at most one live run drives a session. The server decides
 * from its own rows; a refusal because another live run holds the session means no prompt at all.
 */
import type { Journal } from './files';
import type { SessionOrigin } from './session-rules';

export interface LedgerAccess {
  apiUrl: string;
  runToken: string;
  runId: string;
}

export interface SessionToClaim {
  sessionId: string;
  cwd: string;
  command: string[];
  host: string;
  origin: SessionOrigin;
}

export type ClaimAnswer = { kind: 'claimed'; claims: number } | { kind: 'in_use'; byRunId: string | null };

export class ClaimFailed extends Error {
  override readonly name = 'ClaimFailed';
}

/** a busy or restarting API (a deploy) is waited out for about 15 s; a refusal is final at once */
const ATTEMPTS = 5;
const REQUEST_TIMEOUT_MS = 10_000;

export async function claimSession(access: LedgerAccess, session: SessionToClaim): Promise<ClaimAnswer> {
  const url = `${access.apiUrl.replace(/\/$/, '')}/api/runs/${encodeURIComponent(access.runId)}/acp-session`;
  let last = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, 500 * 2 ** (attempt - 2)));
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'PUT',
        headers: { authorization: `Bearer ${access.runToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(session),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
      continue;
    }
    const body = (await response.json().catch(() => null)) as {
      claims?: number;
      error?: { message?: string; details?: { reason?: string; runId?: string } };
    } | null;
    if (response.ok) return { kind: 'claimed', claims: body?.claims ?? 1 };
    if (response.status === 409 && body?.error?.details?.reason === 'session_in_use')
      return { kind: 'in_use', byRunId: body.error.details.runId ?? null };
    last = `${response.status} ${body?.error?.message ?? response.statusText}`;
    if (response.status < 500) break; // refused: asking again gets the same answer
  }
  throw new ClaimFailed(`the session ledger did not record the claim: ${last}`);
}

/** Claims the session and journals the answer; false when another live run holds it: then there is no prompt. */
export async function claimOrRefuse(
  access: LedgerAccess,
  session: SessionToClaim,
  journal: Journal,
  say: (text: string) => void,
): Promise<boolean> {
  const { kind: answer, ...facts } = await claimSession(access, session);
  journal.write({ kind: 'session_claim', sessionId: session.sessionId, answer, ...facts });
  if (answer === 'claimed') return true;
  const holder = 'byRunId' in facts ? facts.byRunId : null;
  const text = `the session ${session.sessionId} is in use by live run ${holder}: no prompt`;
  journal.write({ kind: 'failed', phase: 'ready', text });
  say(text);
  return false;
}
