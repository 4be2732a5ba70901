/**
 * The first layer of an `acp` run's stop (docs/run-supervision.md, "ACP agents"): the worker sends SIGTERM to the
 * run's ACP supervisor alone, which cancels the turn (`session/cancel`), waits for its answer, ends its agent and
 * exits; only then does the verified stop of everything left in the run's cgroup begin. These are the supervisor's
 * bounds, shared by the supervisor (acp/config.ts) and the worker that waits for it.
 */

export const ACP_SUPERVISOR_DEFAULTS = { cancelWaitMs: 10_000, agentGraceMs: 3_000, startTimeoutMs: 120_000 } as const;

/**
 * The supervisor's exit status for a stop at a known point (its checkpoint written): EX_TEMPFAIL, "try again later".
 * The start shell records it outside the sandbox, where the agent cannot write, so the agent cannot forge it as it
 * could the checkpoint file: an `acp` run's stop is `preserved` only with this status (domain/checkpoint.ts).
 */
export const ACP_PRESERVED_EXIT = 75;

/** On the supervisor's environment, never its agent's: how a stop finds the supervisor among the run's processes. */
export const ACP_SUPERVISOR_MARK = 'TREEWARDEN_ACP_SUPERVISOR';

import type { Adapter } from './adapter';

/** The process to stop first and alone (an `acp` run's supervisor), and how long it may take to exit. */
export interface FirstLayer {
  /** a variable only that process's environment carries */
  mark: string;
  withinMs: number;
}

/** the supervisor's own exit after its agent ended (a node process writing its checkpoint and journal) */
const SUPERVISOR_EXIT_MARGIN_MS = 5_000;

const millisecondsOr = (raw: string | undefined, fallback: number): number => {
  const n = Number(raw);
  return raw !== undefined && raw !== '' && Number.isInteger(n) && n >= 0 ? n : fallback;
};

/**
 * How long the worker waits for the supervisor to exit after its SIGTERM, from the run's adapter `env` (where the
 * supervisor's bounds are set): its cancel wait, its agent's grace, and a margin, at most 40 s. Past it, the verified
 * stop goes on without it (no checkpoint then: an unknown outcome).
 */
export function acpFirstLayerMs(adapterEnv: Readonly<Record<string, string>>): number {
  const wanted =
    millisecondsOr(adapterEnv.TREEWARDEN_ACP_CANCEL_WAIT_MS, ACP_SUPERVISOR_DEFAULTS.cancelWaitMs) +
    millisecondsOr(adapterEnv.TREEWARDEN_ACP_AGENT_GRACE_MS, ACP_SUPERVISOR_DEFAULTS.agentGraceMs) +
    SUPERVISOR_EXIT_MARGIN_MS;
  return Math.min(wanted, FIRST_LAYER_MAX_MS);
}

/** the verified stop's activity has a minute to finish, the second layer's grace and SIGKILL included */
export const FIRST_LAYER_MAX_MS = 40_000;

/** A stop's first layer for a run of this adapter: only an `acp` run has one. */
export function firstLayerOf(adapter: Adapter | null): FirstLayer | null {
  if (adapter?.type !== 'acp') return null;
  return { mark: ACP_SUPERVISOR_MARK, withinMs: acpFirstLayerMs(adapter.env) };
}
