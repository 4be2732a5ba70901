/** Who is making a request. A run actor may carry a watchdog scope from its run context. */
export interface WatchdogScope {
  watchdogId: string;
  watchedIssueId: string;
  reviewIssueId: string;
  fingerprint: string;
}

export type Actor =
  | { kind: 'admin' }
  | { kind: 'board'; companyId: string }
  | { kind: 'run'; companyId: string; agentId: string; runId: string; issueId: string; watchdog: WatchdogScope | null }
  | { kind: 'system'; companyId: string };

/** An actor inside one company: everyone but the admin. */
export type ScopedActor = Exclude<Actor, { kind: 'admin' }>;

export function actorId(actor: Actor): string | null {
  switch (actor.kind) {
    case 'admin':
    case 'board':
    case 'system':
      return null;
    case 'run':
      return actor.agentId;
  }
}
