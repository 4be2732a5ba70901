/**
 * @module Unit: the ACP supervisor's permission policy (acp/permission.ts): allow once inside the workspace, reject
 * anything naming a place outside it, answer `cancelled` while a stop cancels the turn.
 */
import type { PermissionOption } from '@agentclientprotocol/sdk';
import { decidePermission, type PermissionFacts } from '../../acp/permission';

const ALL: PermissionOption[] = [
  { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'never', name: 'Never', kind: 'reject_always' },
  { optionId: 'no', name: 'Reject', kind: 'reject_once' },
];

const facts = (o: Partial<PermissionFacts> = {}): PermissionFacts => ({
  options: ALL,
  locations: ['/ws/a.ts'],
  inside: (p) => p.startsWith('/ws/'),
  cancelling: false,
  unlocated: 'allow',
  ...o,
});

test('locations all inside the workspace: allowed once (allow_once before allow_always)', () => {
  expect(decidePermission(facts({ locations: ['/ws/a.ts', '/ws/b/c.ts'] }))).toEqual({
    response: { outcome: { outcome: 'selected', optionId: 'once' } },
    decision: 'allowed',
    optionId: 'once',
    reason: 'every location is inside the workspace',
  });
});

test('only allow_always offered: that one', () => {
  const options = ALL.filter((o) => o.kind !== 'allow_once');
  expect(decidePermission(facts({ options }))).toMatchObject({ decision: 'allowed', optionId: 'always' });
});

test('one location outside: rejected once (reject_once before reject_always), naming it', () => {
  expect(decidePermission(facts({ locations: ['/ws/a.ts', '/etc/hosts'] }))).toEqual({
    response: { outcome: { outcome: 'selected', optionId: 'no' } },
    decision: 'rejected',
    optionId: 'no',
    reason: '/etc/hosts is outside the workspace',
  });
});

test('only reject_always offered: that one', () => {
  const options = ALL.filter((o) => o.kind !== 'reject_once');
  expect(decidePermission(facts({ options, locations: ['/etc/hosts'] }))).toMatchObject({ optionId: 'never' });
});

test('while cancelling: cancelled, whatever the locations', () => {
  expect(decidePermission(facts({ cancelling: true }))).toEqual({
    response: { outcome: { outcome: 'cancelled' } },
    decision: 'cancelled',
    optionId: null,
    reason: 'the turn is being cancelled',
  });
});

test('no location: allowed by default, rejected when the policy says so', () => {
  expect(decidePermission(facts({ locations: null }))).toMatchObject({
    decision: 'allowed',
    reason: 'the tool call names no location',
  });
  expect(decidePermission(facts({ locations: [], unlocated: 'reject' }))).toMatchObject({
    decision: 'rejected',
    optionId: 'no',
  });
});

test('nothing to reject with: cancelled, the only refusal left', () => {
  const options = ALL.filter((o) => o.kind.startsWith('allow'));
  expect(decidePermission(facts({ options, locations: ['/etc/hosts'] }))).toMatchObject({
    response: { outcome: { outcome: 'cancelled' } },
    decision: 'cancelled',
    reason: '/etc/hosts is outside the workspace; the agent offered no reject option',
  });
});

test('nothing to allow with: rejected', () => {
  const options = ALL.filter((o) => o.kind.startsWith('reject'));
  expect(decidePermission(facts({ options }))).toMatchObject({
    decision: 'rejected',
    reason: 'the agent offered no allow option',
  });
});
