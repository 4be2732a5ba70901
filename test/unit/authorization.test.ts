/**
 * @module Unit: the authorization table (domain/authorization.ts), every actor kind × action ×
 * own/scope/other target × own/other company. The expectation below is the issue-13 contract
 * written out independently of the rules it checks.
 */
import type { Actor } from '../../domain/actor';
import { ACTIONS, authorize, type Action, type Reach } from '../../domain/authorization';

const COMPANY = 'company-a';
const OTHER_COMPANY = 'company-b';

const ACTORS: Record<'admin' | 'board' | 'run' | 'watchdog run', Actor> = {
  admin: { kind: 'admin' },
  board: { kind: 'board', companyId: COMPANY },
  run: { kind: 'run', companyId: COMPANY, agentId: 'agent', runId: 'run', issueId: 'issue', watchdog: null },
  'watchdog run': {
    kind: 'run',
    companyId: COMPANY,
    agentId: 'watcher',
    runId: 'review-run',
    issueId: 'review-task',
    watchdog: {
      watchdogId: 'w',
      watchedIssueId: 'root',
      reviewIssueId: 'review-task',
      fingerprint: 'f',
      incompleteIssueIds: [],
      revoked: null,
    },
  },
};

const NONE: Reach[] = [];
const OWN: Reach[] = ['own'];
const OWN_OR_SCOPE: Reach[] = ['own', 'scope'];

/**
 * What each run token may reach (own: its own issue or run; scope: its issue's subtree, for a
 * watchdog run the watched subtree). The board may do everything but create companies and declare
 * hosts lost; the admin only does those.
 */
const EXPECTED: Record<Action, { run: Reach[]; watchdogRun: Reach[] }> = {
  'company.create': { run: NONE, watchdogRun: NONE },
  'host.declare_lost': { run: NONE, watchdogRun: NONE },
  'agent.manage': { run: NONE, watchdogRun: NONE },
  'watchdog.manage': { run: NONE, watchdogRun: NONE },
  'hold.manage': { run: NONE, watchdogRun: NONE },
  'blocker.resolve': { run: NONE, watchdogRun: NONE },
  'webhook.manage': { run: NONE, watchdogRun: NONE },
  'issue.create': { run: OWN_OR_SCOPE, watchdogRun: ['scope'] },
  'issue.update': { run: OWN_OR_SCOPE, watchdogRun: OWN_OR_SCOPE },
  'issue.comment': { run: OWN_OR_SCOPE, watchdogRun: OWN_OR_SCOPE },
  'issue.wake': { run: OWN_OR_SCOPE, watchdogRun: NONE },
  'issue.monitor': { run: OWN_OR_SCOPE, watchdogRun: ['scope'] },
  'interaction.open': { run: OWN_OR_SCOPE, watchdogRun: OWN_OR_SCOPE },
  'interaction.resolve': { run: OWN_OR_SCOPE, watchdogRun: OWN_OR_SCOPE },
  'run.stop': { run: NONE, watchdogRun: NONE },
  'run.inspect': { run: OWN, watchdogRun: OWN },
  'run.start_job': { run: OWN, watchdogRun: OWN },
  'run.record_evidence': { run: OWN, watchdogRun: NONE },
  'run.ack': { run: NONE, watchdogRun: NONE },
  'run.silence': { run: NONE, watchdogRun: NONE },
  'run.claim_session': { run: OWN, watchdogRun: OWN },
};

/** Fleet-wide actions with no company: the admin's alone. */
const ADMIN_ONLY: Action[] = ['company.create', 'host.declare_lost'];

function expected(
  actorKind: keyof typeof ACTORS,
  action: Action,
  reach: Reach,
  sameCompany: boolean,
): 'allowed' | 'forbidden' | 'not_found' {
  if (actorKind === 'admin') return ADMIN_ONLY.includes(action) ? 'allowed' : 'forbidden';
  if (ADMIN_ONLY.includes(action)) return 'forbidden';
  if (!sameCompany) return 'not_found';
  if (actorKind === 'board') return 'allowed';
  const reachable = actorKind === 'run' ? EXPECTED[action].run : EXPECTED[action].watchdogRun;
  return reachable.includes(reach) ? 'allowed' : 'forbidden';
}

const cases = (Object.keys(ACTORS) as (keyof typeof ACTORS)[]).flatMap((actorKind) =>
  ACTIONS.flatMap((action) =>
    (['own', 'scope', 'outside'] as Reach[]).flatMap((reach) =>
      [true, false].map((sameCompany) => ({
        actorKind,
        action,
        reach,
        sameCompany,
        want: expected(actorKind, action, reach, sameCompany),
      })),
    ),
  ),
);

test.each(cases)(
  '$actorKind · $action · target $reach · same company $sameCompany → $want',
  ({ actorKind, action, reach, sameCompany, want }) => {
    const companyId = ADMIN_ONLY.includes(action) ? null : sameCompany ? COMPANY : OTHER_COMPANY;
    const decision = authorize(ACTORS[actorKind], action, { companyId, reach });
    expect(decision.allowed ? 'allowed' : decision.code).toBe(want);
    if (!decision.allowed && decision.code === 'forbidden') expect(decision.reason.length).toBeGreaterThan(20);
  },
);

test('every action has an expectation, and stopping is a board action for every run token', () => {
  expect(Object.keys(EXPECTED).sort()).toEqual([...ACTIONS].sort());
  for (const actorKind of ['run', 'watchdog run'] as const) {
    for (const reach of ['own', 'outside'] as Reach[]) {
      const decision = authorize(ACTORS[actorKind], 'run.stop', { companyId: COMPANY, reach });
      expect(decision).toMatchObject({ allowed: false, code: 'forbidden' });
    }
  }
});

const watchdogRun = ACTORS['watchdog run'] as Extract<Actor, { kind: 'run' }>;
const withScope = (change: Partial<NonNullable<typeof watchdogRun.watchdog>>): Actor => ({
  ...watchdogRun,
  watchdog: { ...watchdogRun.watchdog!, ...change },
});

test('a revoked watchdog run may do nothing at all, each refusal naming why', () => {
  const revoked = withScope({ revoked: 'its watchdog was removed' });
  for (const action of ACTIONS)
    for (const reach of ['own', 'scope', 'outside'] as Reach[]) {
      const decision = authorize(revoked, action, { companyId: ADMIN_ONLY.includes(action) ? null : COMPANY, reach });
      expect(decision).toMatchObject({ allowed: false, code: 'forbidden' });
      if (!ADMIN_ONLY.includes(action) && !decision.allowed)
        expect(decision.reason).toBe('watchdog authority revoked: its watchdog was removed');
    }
});

test('while the watched subtree is incomplete, a watchdog run may only comment on its review task', () => {
  const incomplete = withScope({ incompleteIssueIds: ['deep-1', 'deep-2'] });
  for (const action of ACTIONS)
    for (const reach of ['own', 'scope', 'outside'] as Reach[]) {
      const decision = authorize(incomplete, action, {
        companyId: ADMIN_ONLY.includes(action) ? null : COMPANY,
        reach,
      });
      const complete = expected('watchdog run', action, reach, true);
      if (complete !== 'allowed') expect(decision).toMatchObject({ allowed: false, code: complete });
      else if (action === 'issue.comment' && reach === 'own') expect(decision).toEqual({ allowed: true });
      else
        expect(decision).toMatchObject({
          allowed: false,
          code: 'subtree_incomplete',
          details: { incompleteIssueIds: ['deep-1', 'deep-2'] },
        });
    }
});
