/**
 * The permission policy: how the supervisor answers `session/request_permission` with no person at hand.
 * Work inside the workspace is allowed (once: the next call asks again); anything that names a place outside it is
 * rejected; while a stop cancels the turn every request is answered `cancelled`, as ACP asks of a client.
 */
import type { PermissionOption, RequestPermissionResponse } from '@agentclientprotocol/sdk';

/** What a tool call that names no location gets: the sandbox, not this answer, bounds what it touches. */
export type UnlocatedPolicy = 'allow' | 'reject';

export interface PermissionFacts {
  options: readonly PermissionOption[];
  /** the tool call's `locations` paths; null or empty when it named none */
  locations: readonly string[] | null;
  /** whether a location resolves inside the workspace (acp/paths.ts) */
  inside: (location: string) => boolean;
  /** a stop has sent `session/cancel` */
  cancelling: boolean;
  unlocated: UnlocatedPolicy;
}

export interface PermissionDecision {
  response: RequestPermissionResponse;
  decision: 'allowed' | 'rejected' | 'cancelled';
  optionId: string | null;
  reason: string;
}

const ALLOW_KINDS = ['allow_once', 'allow_always'] as const;
const REJECT_KINDS = ['reject_once', 'reject_always'] as const;

const firstOfKinds = (options: readonly PermissionOption[], kinds: readonly string[]): PermissionOption | null => {
  for (const kind of kinds) {
    const found = options.find((o) => o.kind === kind);
    if (found) return found;
  }
  return null;
};

const cancelled = (reason: string): PermissionDecision => ({
  response: { outcome: { outcome: 'cancelled' } },
  decision: 'cancelled',
  optionId: null,
  reason,
});

function reject(options: readonly PermissionOption[], reason: string): PermissionDecision {
  const option = firstOfKinds(options, REJECT_KINDS);
  // an agent that offers no way to say no is answered `cancelled`: the only refusal left in the protocol
  if (!option) return cancelled(`${reason}; the agent offered no reject option`);
  return {
    response: { outcome: { outcome: 'selected', optionId: option.optionId } },
    decision: 'rejected',
    optionId: option.optionId,
    reason,
  };
}

export function decidePermission(f: PermissionFacts): PermissionDecision {
  if (f.cancelling) return cancelled('the turn is being cancelled');
  const locations = f.locations ?? [];
  if (locations.length === 0 && f.unlocated === 'reject') return reject(f.options, 'the tool call names no location');
  const outside = locations.find((l) => !f.inside(l));
  if (outside !== undefined) return reject(f.options, `${outside} is outside the workspace`);
  const option = firstOfKinds(f.options, ALLOW_KINDS);
  if (!option) return reject(f.options, 'the agent offered no allow option');
  return {
    response: { outcome: { outcome: 'selected', optionId: option.optionId } },
    decision: 'allowed',
    optionId: option.optionId,
    reason: locations.length === 0 ? 'the tool call names no location' : 'every location is inside the workspace',
  };
}
