/**
 * Who may do what: one rule per action, shared by every route and service that performs it.
 * Pure: the caller supplies the facts (the target's company and, for a run token, where the target
 * sits relative to the run's own work); access/authority.ts reads them from the database.
 *
 * - admin: creates companies and declares fleet hosts lost, nothing else.
 * - board: everything in its own company.
 * - run (plain): reads its company; writes only its own issue, that issue's subtree and its own run.
 * - run with a watchdog scope (seed 000, "Authority contract"): comments, child issues, status moves
 *   and interactions inside the watched subtree, its review task, and its own run's jobs; nothing once
 *   the scope is revoked, and only comments on its review task while the subtree is incomplete.
 * Another company's target is always "not found", so ids never leak across tenants.
 */
import type { Actor } from './actor';

export const ACTIONS = [
  'company.create',
  'host.declare_lost',
  'agent.manage',
  'watchdog.manage',
  'hold.manage',
  'issue.create',
  'issue.update',
  'issue.comment',
  'issue.wake',
  'issue.monitor',
  'interaction.open',
  'interaction.resolve',
  'run.stop',
  'run.inspect',
  'run.start_job',
  'run.record_evidence',
  'run.ack',
  'run.silence',
  'run.claim_session',
  'blocker.resolve',
  'webhook.manage',
] as const;
export type Action = (typeof ACTIONS)[number];

/**
 * Where the target sits relative to a run token's own work: its own issue (a watchdog run's own
 * issue is its review task) or its own run, `scope` for the issue's subtree (a watchdog run's
 * watched subtree), or `outside`. A new root issue (no parent) is `outside`.
 */
export type Reach = 'own' | 'scope' | 'outside';

export interface Target {
  /** the company the target belongs to; null for company creation */
  companyId: string | null;
  /** only consulted for run tokens */
  reach: Reach;
}

export type Decision =
  | { allowed: true }
  | { allowed: false; code: 'forbidden' | 'not_found'; reason: string }
  | { allowed: false; code: 'subtree_incomplete'; reason: string; details: { incompleteIssueIds: string[] } };

/** What a run token may reach for an action. */
type RunReach = 'none' | 'own' | 'scope' | 'own_or_scope';

interface Rule {
  /** said in refusals: "<what> requires a board token" */
  what: string;
  adminOnly?: true;
  run: RunReach;
  watchdogRun: RunReach;
}

/** The table. Board tokens may do every action but the admin-only ones, in their own company. */
const RULES: Record<Action, Rule> = {
  'company.create': { what: 'creating companies', adminOnly: true, run: 'none', watchdogRun: 'none' },
  // a host serves every company: only the operator of the fleet can say it is gone
  'host.declare_lost': { what: 'declaring a host lost', adminOnly: true, run: 'none', watchdogRun: 'none' },
  'agent.manage': { what: 'creating or changing agents', run: 'none', watchdogRun: 'none' },
  'watchdog.manage': { what: 'reading or changing watchdog configuration', run: 'none', watchdogRun: 'none' },
  'hold.manage': { what: 'tree holds', run: 'none', watchdogRun: 'none' },
  // a watchdog run files follow-ups under watched issues, never under its own review task
  'issue.create': { what: 'creating issues', run: 'own_or_scope', watchdogRun: 'scope' },
  'issue.update': { what: 'updating issues', run: 'own_or_scope', watchdogRun: 'own_or_scope' },
  'issue.comment': { what: 'commenting', run: 'own_or_scope', watchdogRun: 'own_or_scope' },
  // a watchdog restores a path by reopening or reassigning, never by waking agents itself
  'issue.wake': { what: 'waking agents', run: 'own_or_scope', watchdogRun: 'none' },
  // seed 000: a watchdog may set or refresh a one-shot monitor on an included issue, whose assignee owns the check
  'issue.monitor': { what: 'setting issue monitors', run: 'own_or_scope', watchdogRun: 'scope' },
  'interaction.open': { what: 'opening interactions', run: 'own_or_scope', watchdogRun: 'own_or_scope' },
  'interaction.resolve': { what: 'resolving interactions', run: 'own_or_scope', watchdogRun: 'own_or_scope' },
  'run.stop': { what: 'stopping runs, jobs and monitors', run: 'none', watchdogRun: 'none' },
  'run.inspect': { what: 'inspecting runs', run: 'own', watchdogRun: 'own' },
  // jobs are bound to their owner run and end with it; a watchdog may check evidence with them
  'run.start_job': { what: 'starting jobs', run: 'own', watchdogRun: 'own' },
  // gate evidence supersedes failed runs: a verifier does not produce the proof it reviews
  'run.record_evidence': { what: 'recording gate evidence', run: 'own', watchdogRun: 'none' },
  'run.ack': { what: 'acknowledging a failure', run: 'none', watchdogRun: 'none' },
  'run.silence': { what: 'deciding on a silent run', run: 'none', watchdogRun: 'none' },
  // an acp run's supervisor claims the session it drives and its issue's queued messages, for its own run only
  'run.claim_session': { what: "claiming an ACP session or its issue's messages", run: 'own', watchdogRun: 'own' },
  // reconciling an unknown outcome is a person's call (composer-stop.md), never the agent's own
  'blocker.resolve': { what: 'resolving an execution blocker', run: 'none', watchdogRun: 'none' },
  // a subscription's URL and secret are the company's, not an agent's to redirect
  'webhook.manage': { what: 'managing webhooks', run: 'none', watchdogRun: 'none' },
};

const reaches = (allowed: RunReach, reach: Reach): boolean =>
  allowed === 'own_or_scope' ? reach !== 'outside' : allowed === reach;

const WHERE: Record<Exclude<RunReach, 'none'>, { run: string; watchdogRun: string }> = {
  own: { run: "on the run's own run", watchdogRun: "on the watchdog run's own run" },
  scope: { run: "inside the run's issue subtree", watchdogRun: 'inside the watched subtree' },
  own_or_scope: {
    run: "on the run's own issue and its subtree",
    watchdogRun: 'inside the watched subtree or on its review task',
  },
};

const ALLOWED: Decision = { allowed: true };
const forbidden = (reason: string): Decision => ({ allowed: false, code: 'forbidden', reason });

export function authorize(actor: Actor, action: Action, target: Target): Decision {
  const rule = RULES[action];
  if (actor.kind === 'admin') {
    return rule.adminOnly
      ? ALLOWED
      : forbidden('the admin token manages companies and hosts; use the company board token for this route');
  }
  if (rule.adminOnly) return forbidden(`${rule.what} requires the admin token`);
  if (target.companyId !== null && target.companyId !== actor.companyId)
    return { allowed: false, code: 'not_found', reason: 'not found' };
  if (actor.kind === 'board' || actor.kind === 'system') return ALLOWED;
  const watchdog = actor.watchdog !== null;
  if (actor.watchdog?.revoked) return forbidden(`watchdog authority revoked: ${actor.watchdog.revoked}`);
  const allowed = watchdog ? rule.watchdogRun : rule.run;
  if (allowed !== 'none' && reaches(allowed, target.reach)) {
    const incomplete = actor.watchdog?.incompleteIssueIds ?? [];
    // seed 000: until the whole subtree can be read, a review may only talk on its own review task
    if (incomplete.length > 0 && !(action === 'issue.comment' && target.reach === 'own'))
      return {
        allowed: false,
        code: 'subtree_incomplete',
        reason:
          `watchdog authority: the watched subtree could not be read in full (${incomplete.join(', ')}); ` +
          'only comments on the review task are allowed until it can',
        details: { incompleteIssueIds: incomplete },
      };
    return ALLOWED;
  }
  const prefix = watchdog ? 'watchdog authority' : 'run token';
  if (allowed === 'none') return forbidden(`${prefix}: ${rule.what} requires a board token`);
  return forbidden(`${prefix}: ${rule.what} is only allowed ${WHERE[allowed][watchdog ? 'watchdogRun' : 'run']}`);
}
