/** Who is making a request. A review run's actor carries the scope of its watchdog (domain/review-authority.ts). */
export interface WatchdogScope {
  watchdogId: string;
  watchedIssueId: string;
  reviewIssueId: string;
  fingerprint: string;
  /** what the watchdog's last evaluation could not read: its run's writes wait until it can (seed 000) */
  incompleteIssueIds: string[];
  /** why the run's watchdog authority is gone (removed, reassigned), or null while it holds */
  revoked: string | null;
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
