/**
 * The supervisor's command line and environment. Its own settings are `TREEWARDEN_ACP_*` variables (an adapter's
 * `env` sets them); the run's are those treewarden gives every `process` run. Pure: the caller passes the real cwd.
 */
import path from 'node:path';
import { ACP_PRESERVED_EXIT, ACP_SUPERVISOR_DEFAULTS, ACP_SUPERVISOR_MARK } from '../domain/acp-stop';
import { ACP_MESSAGE_POLICIES, type AcpMessagePolicy } from '../domain/acp-activity';
import type { LedgerAccess } from './ledger';
import type { UnlocatedPolicy } from './permission';

export interface SupervisorConfig {
  /** the agent's command line: the command, then its arguments */
  command: string[];
  /** the workspace's real path: the supervisor's cwd */
  workspace: string;
  runId: string | null;
  issueId: string | null;
  wakeReason: string | null;
  journalFile: string;
  checkpointFile: string | null;
  contextFile: string | null;
  capsuleFile: string | null;
  /** where the session is recorded before the first prompt */
  sessionFile: string;
  /** how long a stop waits for the turn to answer `session/cancel` */
  cancelWaitMs: number;
  /** SIGTERM to SIGKILL, when the supervisor ends its agent */
  agentGraceMs: number;
  /** the bound on `initialize` and the session's creation or load */
  startTimeoutMs: number;
  unlocated: UnlocatedPolicy;
  /** the session ledger (acp/ledger.ts): the run's API and token; null when run by hand without them */
  ledger: LedgerAccess | null;
  /** how often, at most, the run's activity is reported while it changes (acp/activity.ts) */
  reportEveryMs: number;
  /** the adapter's message policy: a person's message waits for the turn's end, or interrupts it */
  messages: AcpMessagePolicy;
  /** with `interrupt`: how often a turn asks whether a message is queued */
  messagePollMs: number;
}

/** The supervisor's exit codes: 0 only for a turn that ended with `end_turn`. */
export const EXIT = {
  endTurn: 0,
  usage: 2,
  otherStopReason: 3,
  agentFailed: 4,
  sessionInUse: 5,
  /** stopped at a known point, its checkpoint written: the worker trusts the checkpoint only with this status */
  stoppedPreserved: ACP_PRESERVED_EXIT,
  stopped: 143,
} as const;

export const USAGE = 'usage: treewarden-acp [--] <agent command> [args...]';

export const DEFAULTS = ACP_SUPERVISOR_DEFAULTS;

/** Variables meant for the supervisor alone: the agent does not inherit them (the checkpoint is the supervisor's). */
export const SUPERVISOR_ONLY_ENV = [
  'TREEWARDEN_CHECKPOINT_FILE',
  'TREEWARDEN_ACP_SESSION_FILE',
  'TREEWARDEN_ACP_CANCEL_WAIT_MS',
  'TREEWARDEN_ACP_AGENT_GRACE_MS',
  'TREEWARDEN_ACP_START_TIMEOUT_MS',
  'TREEWARDEN_ACP_UNLOCATED_TOOLS',
  'TREEWARDEN_ACP_REPORT_MS',
  'TREEWARDEN_ACP_MESSAGES',
  'TREEWARDEN_ACP_MESSAGE_POLL_MS',
  ACP_SUPERVISOR_MARK,
];

type Env = Record<string, string | undefined>;

const nonEmpty = (v: string | undefined): string | null => (v === undefined || v === '' ? null : v);

function milliseconds(env: Env, name: string, fallback: number): number | string {
  const raw = nonEmpty(env[name]);
  if (raw === null) return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : `${name} must be a whole number of milliseconds, not ${raw}`;
}

export function supervisorConfig(
  argv: readonly string[],
  env: Env,
  workspace: string,
): { ok: true; config: SupervisorConfig } | { ok: false; error: string } {
  const command = argv[0] === '--' ? argv.slice(1) : [...argv];
  if (command.length === 0 || command[0] === '') return { ok: false, error: `no agent command given; ${USAGE}` };
  const journalFile = nonEmpty(env.TREEWARDEN_JOURNAL_FILE);
  if (journalFile === null)
    return { ok: false, error: 'TREEWARDEN_JOURNAL_FILE is not set: run the supervisor as a treewarden process run' };
  const cancelWaitMs = milliseconds(env, 'TREEWARDEN_ACP_CANCEL_WAIT_MS', DEFAULTS.cancelWaitMs);
  const agentGraceMs = milliseconds(env, 'TREEWARDEN_ACP_AGENT_GRACE_MS', DEFAULTS.agentGraceMs);
  const startTimeoutMs = milliseconds(env, 'TREEWARDEN_ACP_START_TIMEOUT_MS', DEFAULTS.startTimeoutMs);
  const reportEveryMs = milliseconds(env, 'TREEWARDEN_ACP_REPORT_MS', 2_000);
  const messagePollMs = milliseconds(env, 'TREEWARDEN_ACP_MESSAGE_POLL_MS', 2_000);
  for (const v of [cancelWaitMs, agentGraceMs, startTimeoutMs, reportEveryMs, messagePollMs])
    if (typeof v === 'string') return { ok: false, error: v };
  const messages = nonEmpty(env.TREEWARDEN_ACP_MESSAGES) ?? 'after_turn';
  if (!(ACP_MESSAGE_POLICIES as readonly string[]).includes(messages))
    return { ok: false, error: `TREEWARDEN_ACP_MESSAGES must be after_turn or interrupt, not ${messages}` };
  const unlocated = nonEmpty(env.TREEWARDEN_ACP_UNLOCATED_TOOLS) ?? 'allow';
  if (unlocated !== 'allow' && unlocated !== 'reject')
    return { ok: false, error: `TREEWARDEN_ACP_UNLOCATED_TOOLS must be allow or reject, not ${unlocated}` };
  return {
    ok: true,
    config: {
      command,
      workspace,
      runId: nonEmpty(env.TREEWARDEN_RUN_ID),
      issueId: nonEmpty(env.TREEWARDEN_ISSUE_ID),
      wakeReason: nonEmpty(env.TREEWARDEN_WAKE_REASON),
      journalFile,
      checkpointFile: nonEmpty(env.TREEWARDEN_CHECKPOINT_FILE),
      contextFile: nonEmpty(env.TREEWARDEN_CONTEXT_FILE),
      capsuleFile: nonEmpty(env.TREEWARDEN_CAPSULE_FILE),
      // the run's folder: the journal's
      sessionFile:
        nonEmpty(env.TREEWARDEN_ACP_SESSION_FILE) ?? path.join(path.dirname(journalFile), 'acp-session.json'),
      cancelWaitMs: cancelWaitMs as number,
      agentGraceMs: agentGraceMs as number,
      startTimeoutMs: startTimeoutMs as number,
      unlocated,
      ledger: ledgerOf(env),
      reportEveryMs: reportEveryMs as number,
      messages: messages as AcpMessagePolicy,
      messagePollMs: messagePollMs as number,
    },
  };
}

function ledgerOf(env: Env): LedgerAccess | null {
  const apiUrl = nonEmpty(env.TREEWARDEN_API_URL);
  const runToken = nonEmpty(env.TREEWARDEN_RUN_TOKEN);
  const runId = nonEmpty(env.TREEWARDEN_RUN_ID);
  return apiUrl && runToken && runId ? { apiUrl, runToken, runId } : null;
}

/** The agent's environment: the supervisor's, without what only the supervisor uses. */
export function agentEnvironment(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !SUPERVISOR_ONLY_ENV.includes(k)) out[k] = v;
  return out;
}
