/** @module The ACP session ledger's rule (domain/acp-session.ts): at most one live run uses a session. */
import { decideSessionClaim } from '../../domain/acp-session';
import { RUN_STATUSES, LIVE_RUN_STATUSES } from '../../domain/statuses';

test('a session nobody claimed, or this run claimed already, is claimed', () => {
  expect(decideSessionClaim(null, 'r2')).toEqual({ kind: 'claim' });
  expect(decideSessionClaim({ runId: 'r2', status: 'running' }, 'r2')).toEqual({ kind: 'claim' });
});

test.each(RUN_STATUSES.map((s) => [s]))('held by another run that is %s', (status) => {
  const decision = decideSessionClaim({ runId: 'r1', status }, 'r2');
  expect(decision).toEqual(LIVE_RUN_STATUSES.includes(status) ? { kind: 'in_use', runId: 'r1' } : { kind: 'claim' });
});

test('held by a run retention removed: claimed', () => {
  expect(decideSessionClaim({ runId: 'r1', status: null }, 'r2')).toEqual({ kind: 'claim' });
});
