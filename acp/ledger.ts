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

interface ApiAnswer {
  status: number;
  body: {
    claims?: number;
    items?: unknown;
    queued?: unknown;
    error?: { message?: string; details?: { reason?: string; runId?: string } };
  } | null;
}

/**
 * One call of the run's own API with its token, tried again while the API does not answer or answers 5xx. Answers
 * 2xx and 409; throws ClaimFailed (naming `what`) for anything else.
 */
export async function callRunApi(access: LedgerAccess, method: string, path: string, what: string, body?: unknown) {
  const url = `${access.apiUrl.replace(/\/$/, '')}/api/runs/${encodeURIComponent(access.runId)}/${path}`;
  const headers: Record<string, string> = { authorization: `Bearer ${access.runToken}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let last = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, 500 * 2 ** (attempt - 2)));
    let response: Response;
    try {
      const init = { method, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) };
      response = await fetch(url, body === undefined ? init : { ...init, body: JSON.stringify(body) });
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
      continue;
    }
    const answer = { status: response.status, body: (await response.json().catch(() => null)) as ApiAnswer['body'] };
    if (response.ok || response.status === 409) return answer;
    last = `${response.status} ${answer.body?.error?.message ?? response.statusText}`;
    if (response.status < 500) break; // refused: asking again gets the same answer
  }
  throw new ClaimFailed(`${what}: ${last}`);
}

export async function claimSession(access: LedgerAccess, session: SessionToClaim): Promise<ClaimAnswer> {
  const what = 'the session ledger did not record the claim';
  const { status, body } = await callRunApi(access, 'PUT', 'acp-session', what, session);
  if (status !== 409) return { kind: 'claimed', claims: body?.claims ?? 1 };
  if (body?.error?.details?.reason === 'session_in_use')
    return { kind: 'in_use', byRunId: body.error.details.runId ?? null };
  throw new ClaimFailed(`${what}: 409 ${body?.error?.message ?? ''}`);
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
