/**
 * Conditional acceptance (issue 29, item 1; Paperclip #9452): a review may accept a stop only until a time
 * (`recheckAfter`). The same stop is then evaluated again and re-armed (its agent woken once more), at most
 * `repeatLimit` times; after that the watchdog wakes nobody for it and escalates to people, once per stop.
 */

/** The earliest and latest `recheckAfter` a disposition may carry, from the moment it is written. */
export const RECHECK_AFTER_MIN_MS = 1_000;
export const RECHECK_AFTER_MAX_MS = 90 * 24 * 60 * 60 * 1000;
/** The largest repeat limit a watchdog may be given (0: escalate at the first re-check). */
export const REPEAT_LIMIT_MAX = 100;
export const DEFAULT_REPEAT_LIMIT = 3;

/**
 * The kind of the interaction an escalation opens on the watched issue. It is not fingerprint material (a pending
 * interaction otherwise is): the escalation itself must not become a new stop that wakes the agent again.
 */
export const ESCALATION_INTERACTION_KIND = 'task_watchdog_escalation';

/** Why a `recheckAfter` is refused, or null when it is within its bounds. */
export function recheckAfterProblem(recheckAfter: Date, now: Date): string | null {
  const aheadMs = recheckAfter.getTime() - now.getTime();
  if (aheadMs < RECHECK_AFTER_MIN_MS) return 'recheckAfter: must be at least 1 second in the future';
  if (aheadMs > RECHECK_AFTER_MAX_MS) return 'recheckAfter: must be at most 90 days in the future';
  return null;
}

/**
 * A disposition that accepts the stop, the only kind that may carry `recheckAfter`: done, or in_review handed to
 * someone other than the watchdog agent. A blocked review task accepts nothing; it names an exit of its own.
 */
export function acceptsStop(status: string, assigneeAgentId: string | null, watchdogAgentId: string): boolean {
  return status === 'done' || (status === 'in_review' && assigneeAgentId !== watchdogAgentId);
}

/** What the watchdog knows of its reviewed stop's acceptance. */
export interface AcceptanceState {
  /** null: accepted for good (or never conditionally) */
  acceptedUntil: Date | null;
  recheckCount: number;
  repeatLimit: number;
  escalatedFingerprint: string | null;
}

export type RecheckDecision =
  /** accepted for good: nothing to do until the stop changes */
  | { kind: 'reviewed' }
  /** accepted until `recheckAt`: evaluate the same stop again then */
  | { kind: 'accepted'; recheckAt: Date }
  /** the acceptance ran out with re-arms left: wake the agent again, as re-check `number` (1-based) */
  | { kind: 'recheck'; number: number }
  /** the acceptance ran out and so did the re-arms: escalate to people, wake nobody */
  | { kind: 'escalate' }
  /** escalated already: it waits for people (or for the stop to change) */
  | { kind: 'escalated' };

/** The decision for a stop whose fingerprint is the reviewed one, at `now`. */
export function recheckDecision(fingerprint: string, state: AcceptanceState, now: Date): RecheckDecision {
  if (state.escalatedFingerprint === fingerprint) return { kind: 'escalated' };
  if (state.acceptedUntil === null) return { kind: 'reviewed' };
  if (state.acceptedUntil.getTime() > now.getTime()) return { kind: 'accepted', recheckAt: state.acceptedUntil };
  if (state.recheckCount < state.repeatLimit) return { kind: 'recheck', number: state.recheckCount + 1 };
  return { kind: 'escalate' };
}
