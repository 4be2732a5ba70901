/**
 * @module Unit: every parked state names its exit (domain/blocked-exit.ts, issue 29, item 4): what may enter
 * `blocked`, and how a review is told a blocked leaf's exit. No database.
 */
import {
  blockedWithoutExit,
  describeBlockedLeaf,
  reasonWithoutBlock,
  type BlockedExits,
} from '../../domain/blocked-exit';

const NONE: BlockedExits = {
  blockerIssueIds: [],
  pendingInteractionIds: [],
  executionBlockerIds: [],
  blockedReason: null,
};

describe('blockedWithoutExit', () => {
  test.each<[string, Partial<BlockedExits>]>([
    ['a blocking issue', { blockerIssueIds: ['b'] }],
    ['an open interaction', { pendingInteractionIds: ['i'] }],
    ['an active execution blocker', { executionBlockerIds: ['e'] }],
    ['a reason naming who unblocks it', { blockedReason: 'legal signs the contract' }],
  ])('%s is an exit', (_, exits) => {
    expect(blockedWithoutExit('issue-1', { ...NONE, ...exits })).toBeNull();
  });

  test.each<[string, Partial<BlockedExits>]>([
    ['nothing', {}],
    ['a blank reason', { blockedReason: '  ' }],
  ])('%s is no exit: a 422 naming the missing exit and every kind that would do', (_, exits) => {
    const refusal = blockedWithoutExit('issue-1', { ...NONE, ...exits });
    expect(refusal?.code).toBe('unprocessable');
    expect(refusal?.message).toContain('issue issue-1 cannot be blocked without an exit');
    expect(refusal?.message).toContain('blockedReason');
    expect(refusal?.details).toMatchObject({ issueId: 'issue-1', missing: 'exit' });
  });

  test('a reason is only for a blocked issue', () => {
    expect(reasonWithoutBlock('blocked', 'ops restores the VPN')).toBeNull();
    expect(reasonWithoutBlock('todo', null)).toBeNull();
    expect(reasonWithoutBlock('todo', 'ops restores the VPN')?.code).toBe('unprocessable');
  });
});

describe('describeBlockedLeaf', () => {
  const leaf = (facts: { pendingInteractionIds?: string[]; executionBlockerIds?: string[] } = {}) => ({
    id: 'leaf',
    pendingInteractionIds: facts.pendingInteractionIds ?? [],
    executionBlockerIds: facts.executionBlockerIds ?? [],
  });

  test('lists each blocking issue with its status, sorted, and whether it is resolved', () => {
    const described = describeBlockedLeaf(
      leaf(),
      [
        { id: 'z', status: 'in_progress' },
        { id: 'a', status: 'done' },
      ],
      null,
    );
    expect(described.blockingIssues).toEqual([
      { id: 'a', status: 'done', resolved: true },
      { id: 'z', status: 'in_progress', resolved: false },
    ]);
    expect(described.exitResolved).toBe(false);
  });

  test.each<[string, Parameters<typeof describeBlockedLeaf>, boolean]>([
    [
      'every blocking issue done or cancelled',
      [
        leaf(),
        [
          { id: 'a', status: 'done' },
          { id: 'b', status: 'cancelled' },
        ],
        null,
      ],
      true,
    ],
    [
      'its blocking issue done, whatever reason describes it',
      [leaf(), [{ id: 'a', status: 'done' }], 'until a ships'],
      true,
    ],
    ['nothing names an exit any more (interaction answered, no reason)', [leaf(), [], null], true],
    ['an open interaction', [leaf({ pendingInteractionIds: ['i'] }), [], null], false],
    [
      'an active execution blocker beside a done blocking issue',
      [leaf({ executionBlockerIds: ['e'] }), [{ id: 'a', status: 'done' }], null],
      false,
    ],
    ['a reason alone (only whoever it names can resolve it)', [leaf(), [], 'legal signs the contract'], false],
  ])('exitResolved: %s → %s', (_, args, resolved) => {
    expect(describeBlockedLeaf(...args).exitResolved).toBe(resolved);
  });
});
