/**
 * Adoption (issue 25): a worker that stops lets go of its runs' agents instead of stopping them, and the next worker
 * on the same host adopts each one. These are the names both sides agree on, and the one rule about the status file.
 */

/** The activity failure type of an executeRun (or adoptRun) whose worker let go of a still-running agent. */
export const AGENT_LET_GO = 'AgentLetGo';

/**
 * The cancellation reasons that mean "this worker can no longer supervise", not "stop the run": the worker is shutting
 * down, or the server has given up on this attempt (a late heartbeat, a closed workflow). A stop is `CANCELLED`.
 */
export const LET_GO_REASONS: ReadonlySet<string> = new Set(['WORKER_SHUTDOWN', 'TIMED_OUT', 'NOT_FOUND']);

/**
 * The exit status the start shell recorded, or null when the file holds anything else: the agent can write to its run
 * folder, so the file is read as untrusted text (an integer of a shell's status range, nothing more).
 */
export function parseExitStatus(text: string | null): number | null {
  const trimmed = text?.trim() ?? '';
  if (!/^\d{1,3}$/.test(trimmed)) return null;
  const status = Number(trimmed);
  return status <= 255 ? status : null;
}
