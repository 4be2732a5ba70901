/**
 * @module Unit: the task-watchdog classifier and fingerprint (domain/watchdog.ts), as pure functions
 * of a subtree snapshot. No Temporal, no database.
 */
import { ISSUE_STATUSES, TERMINAL_ISSUE_STATUSES } from '../../domain/statuses';
import {
  classifySubtree,
  isReviewDisposition,
  isShrinkOnly,
  leafDigests,
  MAX_WATCHDOG_DEPTH,
  normalizeInstructions,
  stopFingerprint,
  type StoppedLeaf,
  type SubtreeNode,
  type WatchdogConfig,
} from '../../domain/watchdog';

const NOW = new Date('2025-06-01T12:00:00.000Z');
const GRACE_MS = 15_000;
const LONG_AGO = new Date(NOW.getTime() - 60 * 60_000);
const CONFIG: WatchdogConfig = { agentId: 'agent-watchdog', instructions: null };

/** A settled issue: created long ago, already run once, nothing live, no blockers or interactions. */
function node(id: string, parentId: string | null, depth: number, overrides: Partial<SubtreeNode> = {}): SubtreeNode {
  return {
    id,
    parentId,
    depth,
    status: 'done',
    assigneeAgentId: 'agent-worker',
    createdAtMs: LONG_AGO.getTime(),
    hasLiveRun: false,
    hasQueuedWake: false,
    hasPendingMonitor: false,
    hasAnyRun: true,
    blockerIds: [],
    pendingInteractionIds: [],
    executionBlockerIds: [],
    ...overrides,
  };
}

/** root ─┬─ a ── a1
 *        └─ b        (leaves: a1, b) */
function smallTree(overrides: Record<string, Partial<SubtreeNode>> = {}): SubtreeNode[] {
  return [
    node('root', 'outside', 1, overrides.root),
    node('a', 'root', 2, overrides.a),
    node('a1', 'a', 3, overrides.a1),
    node('b', 'root', 2, overrides.b),
  ];
}

/** A single line of issues c1 (depth 1) … c<length> (depth length). */
function chain(length: number): SubtreeNode[] {
  return Array.from({ length }, (_, i) => node(`c${i + 1}`, i === 0 ? null : `c${i}`, i + 1));
}

const classify = (nodes: SubtreeNode[], config = CONFIG) => classifySubtree(nodes, config, NOW, GRACE_MS);

describe('classifySubtree: live path', () => {
  test.each([
    ['a live run', { hasLiveRun: true }],
    ['a queued wake', { hasQueuedWake: true }],
    ['a pending monitor', { hasPendingMonitor: true }],
  ])('%s anywhere in the subtree keeps it live, with no fingerprint to review', (_what, live) => {
    const result = classify(smallTree({ a1: live }));
    expect(result).toMatchObject({
      state: 'live',
      liveIssueIds: ['a1'],
      stoppedLeaves: [],
      fingerprint: null,
      includedCount: 4,
    });
  });

  test('every live issue is listed, sorted, interior ones included', () => {
    const result = classify(
      smallTree({ b: { hasLiveRun: true }, a: { hasQueuedWake: true }, root: { hasLiveRun: true } }),
    );
    expect(result.liveIssueIds).toEqual(['a', 'b', 'root']);
  });

  test('a live path wins over an issue still inside its first-run grace', () => {
    const result = classify(
      smallTree({ a1: { hasLiveRun: true }, b: { hasAnyRun: false, status: 'todo', createdAtMs: NOW.getTime() } }),
    );
    expect(result.state).toBe('live');
    expect(result.pendingFirstRunIssueIds).toEqual([]);
  });
});

describe('classifySubtree: depth limit', () => {
  test(`a subtree exactly ${MAX_WATCHDOG_DEPTH} levels deep is complete: its deepest issue is the stopped leaf`, () => {
    const result = classify(chain(MAX_WATCHDOG_DEPTH));
    expect(result).toMatchObject({ state: 'stopped', includedCount: MAX_WATCHDOG_DEPTH, incompleteIssueIds: [] });
    expect(result.stoppedLeaves.map((l) => l.id)).toEqual([`c${MAX_WATCHDOG_DEPTH}`]);
  });

  test('issues below the limit make it incomplete: the limit-depth parents are named once each, sorted, and nothing is fingerprinted', () => {
    const nodes = [
      ...chain(MAX_WATCHDOG_DEPTH),
      node('z-sibling', `c${MAX_WATCHDOG_DEPTH - 1}`, MAX_WATCHDOG_DEPTH),
      node('beyond-1', `c${MAX_WATCHDOG_DEPTH}`, MAX_WATCHDOG_DEPTH + 1),
      node('beyond-2', `c${MAX_WATCHDOG_DEPTH}`, MAX_WATCHDOG_DEPTH + 1),
      node('beyond-3', 'z-sibling', MAX_WATCHDOG_DEPTH + 1),
    ];
    const result = classify(nodes);
    expect(result).toMatchObject({
      state: 'incomplete',
      incompleteIssueIds: [`c${MAX_WATCHDOG_DEPTH}`, 'z-sibling'],
      includedCount: MAX_WATCHDOG_DEPTH + 1, // the chain and z-sibling; the walked extra level only proves incompleteness
      stoppedLeaves: [],
      fingerprint: null,
    });
  });

  test('incompleteness is reported even when the included part has a live run (an unwalkable tree is the finding)', () => {
    const nodes = chain(MAX_WATCHDOG_DEPTH + 1);
    nodes[0].hasLiveRun = true;
    const result = classify(nodes);
    expect(result.state).toBe('incomplete');
    expect(result.liveIssueIds).toEqual([]);
  });
});

describe('classifySubtree: first-run grace', () => {
  const fresh = (overrides: Partial<SubtreeNode> = {}) => ({
    hasAnyRun: false,
    status: 'todo',
    createdAtMs: NOW.getTime() - 1_000,
    ...overrides,
  });

  test('an assigned issue without any run, created inside the grace, holds the evaluation as pending_first_run', () => {
    const result = classify(smallTree({ b: fresh() }));
    expect(result).toMatchObject({
      state: 'pending_first_run',
      pendingFirstRunIssueIds: ['b'],
      stoppedLeaves: [],
      fingerprint: null,
    });
  });

  test('the evaluation says when the earliest grace among the pending issues ends, so it can be re-checked then', () => {
    const result = classify(
      smallTree({
        b: fresh({ createdAtMs: NOW.getTime() - 4_000 }),
        a1: fresh({ createdAtMs: NOW.getTime() - 9_000 }),
      }),
    );
    expect(result.firstRunGraceEndsAt).toBe(new Date(NOW.getTime() - 9_000 + GRACE_MS).toISOString());
    expect(classify(smallTree({})).firstRunGraceEndsAt).toBeNull();
  });

  test('several pending issues are listed sorted', () => {
    expect(classify(smallTree({ b: fresh(), a1: fresh(), root: fresh() })).pendingFirstRunIssueIds).toEqual([
      'a1',
      'b',
      'root',
    ]);
  });

  test.each([
    ['exactly at the end of the grace', GRACE_MS, 'stopped'],
    ['one ms before the end of the grace', GRACE_MS - 1, 'pending_first_run'],
    ['long after the grace', GRACE_MS * 10, 'stopped'],
  ])('created %s: %s', (_when, ageMs, state) => {
    expect(classify(smallTree({ b: fresh({ createdAtMs: NOW.getTime() - ageMs }) })).state).toBe(state);
  });

  test('an unassigned issue is not waiting for a first run', () => {
    expect(classify(smallTree({ b: fresh({ assigneeAgentId: null }) })).state).toBe('stopped');
  });

  test('an issue that already had a run (even a finished one) is not waiting for a first run', () => {
    expect(classify(smallTree({ b: fresh({ hasAnyRun: true }) })).state).toBe('stopped');
  });

  test.each(ISSUE_STATUSES.map((status) => [status, !TERMINAL_ISSUE_STATUSES.includes(status)] as const))(
    'status %s: waits for a first run = %s (terminal issues are excluded)',
    (status, waits) => {
      expect(classify(smallTree({ b: fresh({ status }) })).state).toBe(waits ? 'pending_first_run' : 'stopped');
    },
  );
});

describe('classifySubtree: stopped leaves', () => {
  test('the stopped leaves are the issues without children, sorted by id, with their material facts', () => {
    const result = classify(
      smallTree({ b: { status: 'blocked', blockerIds: ['x2', 'x1'] }, a1: { assigneeAgentId: null } }),
    );
    expect(result.state).toBe('stopped');
    expect(result.includedCount).toBe(4);
    expect(result.stoppedLeaves).toEqual<StoppedLeaf[]>([
      {
        id: 'a1',
        status: 'done',
        assigneeAgentId: null,
        blockerIds: [],
        pendingInteractionIds: [],
        executionBlockerIds: [],
      },
      {
        id: 'b',
        status: 'blocked',
        assigneeAgentId: 'agent-worker',
        blockerIds: ['x1', 'x2'],
        pendingInteractionIds: [],
        executionBlockerIds: [],
      },
    ]);
    expect(result.fingerprint).toBe(stopFingerprint(result.stoppedLeaves, CONFIG));
  });

  test('a watched issue without children is its own stopped leaf', () => {
    const result = classify([node('solo', null, 1, { status: 'in_review' })]);
    expect(result.stoppedLeaves.map((l) => l.id)).toEqual(['solo']);
  });

  test('an interior issue with a pending interaction is a stopped leaf too (someone must answer it)', () => {
    const result = classify(smallTree({ a: { pendingInteractionIds: ['q2', 'q1'] } }));
    expect(result.stoppedLeaves.map((l) => l.id)).toEqual(['a', 'a1', 'b']);
    expect(result.stoppedLeaves[0].pendingInteractionIds).toEqual(['q1', 'q2']);
  });

  test('interior issues without pending interactions are not part of the stop', () => {
    const ids = classify(smallTree({ a: { blockerIds: ['x'] } })).stoppedLeaves.map((l) => l.id);
    expect(ids).not.toContain('a');
    expect(ids).not.toContain('root');
  });

  test('leaves are sorted by UTF-16 code unit, not by locale (the order fingerprints were stored in)', () => {
    const nodes = [node('root', null, 1), node('b', 'root', 2), node('B', 'root', 2), node('a', 'root', 2)];
    expect(classify(nodes).stoppedLeaves.map((l) => l.id)).toEqual(['B', 'a', 'b']);
  });

  test('the classifier does not mutate its input (the blocker arrays it sorts are copies)', () => {
    const nodes = smallTree({ b: { blockerIds: ['x2', 'x1'], pendingInteractionIds: ['q2', 'q1'] } });
    classify(nodes);
    expect(nodes[3]).toMatchObject({ blockerIds: ['x2', 'x1'], pendingInteractionIds: ['q2', 'q1'] });
  });
});

describe('stop fingerprint', () => {
  const tree = () =>
    smallTree({ a1: { status: 'blocked', blockerIds: ['x1', 'x2', 'x3'], pendingInteractionIds: ['q1', 'q2'] } });
  const fingerprintOf = (nodes: SubtreeNode[], config = CONFIG) => {
    const result = classify(nodes, config);
    expect(result.state).toBe('stopped');
    return result.fingerprint;
  };

  test('is a SHA-256 hex digest', () => {
    expect(fingerprintOf(tree())).toMatch(/^[0-9a-f]{64}$/);
  });

  test('is stable under the order of the walk and of blocker and interaction ids (the database returns them in any order)', () => {
    const shuffled = tree().reverse();
    const a1 = shuffled.find((n) => n.id === 'a1')!;
    a1.blockerIds = ['x3', 'x1', 'x2'];
    a1.pendingInteractionIds = ['q2', 'q1'];
    expect(fingerprintOf(shuffled)).toBe(fingerprintOf(tree()));
  });

  test('ignores non-material facts: creation time, run history, depth and interior issues (bookkeeping never re-arms a watchdog)', () => {
    // createdAt far outside the grace, so hasAnyRun=false cannot turn into "pending first run"
    const bookkeeping = tree().map((n) => ({ ...n, createdAtMs: 0, hasAnyRun: false, depth: n.depth + 5 }));
    bookkeeping[0] = { ...bookkeeping[0], status: 'in_progress', assigneeAgentId: null, blockerIds: ['x9'] }; // root is interior
    bookkeeping[1] = { ...bookkeeping[1], status: 'cancelled' }; // so is a
    expect(fingerprintOf(bookkeeping)).toBe(fingerprintOf(tree()));
  });

  test.each<[string, (nodes: SubtreeNode[]) => void]>([
    ["a leaf's status", (n) => void (n[2].status = 'done')],
    ["a leaf's assignee", (n) => void (n[2].assigneeAgentId = 'agent-other')],
    ["a leaf's assignee cleared", (n) => void (n[2].assigneeAgentId = null)],
    ['a blocker added', (n) => void (n[2].blockerIds = [...n[2].blockerIds, 'x4'])],
    ['a blocker cleared', (n) => void (n[2].blockerIds = n[2].blockerIds.slice(0, -1))],
    ['an interaction answered', (n) => void (n[2].pendingInteractionIds = n[2].pendingInteractionIds.slice(0, -1))],
    [
      'an execution blocker on a leaf (a run stopped mid-turn, unknown outcome)',
      (n) => void (n[2].executionBlockerIds = ['e1']),
    ],
    [
      'an execution blocker on an interior issue (it waits for a person too)',
      (n) => void (n[1].executionBlockerIds = ['e1']),
    ],
    ['a new leaf under a leaf', (n) => void n.push(node('a1-child', 'a1', 4))],
    ['a leaf removed', (n) => void n.splice(3, 1)],
  ])('changes when %s changes (a different stop deserves its own review)', (_what, mutate) => {
    const changed = tree();
    mutate(changed);
    expect(fingerprintOf(changed)).not.toBe(fingerprintOf(tree()));
  });

  test('resolving the execution blocker restores the fingerprint of the subtree without it (re-armed, not a new kind of stop)', () => {
    const blocked = tree();
    blocked[2].executionBlockerIds = ['e1'];
    expect(fingerprintOf(blocked)).not.toBe(fingerprintOf(tree()));
    blocked[2].executionBlockerIds = [];
    expect(fingerprintOf(blocked)).toBe(fingerprintOf(tree()));
  });

  test.each<[string, WatchdogConfig]>([
    ['the watchdog agent', { ...CONFIG, agentId: 'agent-other-watchdog' }],
    ['the instructions', { ...CONFIG, instructions: 'check the tests first' }],
  ])('changes when %s changes (a reconfigured watchdog reviews the same stop again)', (_what, config) => {
    expect(fingerprintOf(tree(), config)).not.toBe(fingerprintOf(tree()));
  });

  test('distinguishes a missing assignee from an assignee literally named "null" (no ambiguous encoding)', () => {
    const leaf: StoppedLeaf = {
      id: 'l',
      status: 'todo',
      assigneeAgentId: null,
      blockerIds: [],
      pendingInteractionIds: [],
      executionBlockerIds: [],
    };
    expect(stopFingerprint([leaf], CONFIG)).not.toBe(stopFingerprint([{ ...leaf, assigneeAgentId: 'null' }], CONFIG));
  });

  test('stopFingerprint itself hashes leaves in the order given: callers must pass the sorted leaves, as classifySubtree does', () => {
    const leaves = classify(tree()).stoppedLeaves;
    expect(stopFingerprint([...leaves].reverse(), CONFIG)).not.toBe(stopFingerprint(leaves, CONFIG));
  });

  test('empty instructions and no instructions hash differently, which is why instructions are normalized before they are stored', () => {
    const leaves = classify(tree()).stoppedLeaves;
    expect(stopFingerprint(leaves, { ...CONFIG, instructions: '' })).not.toBe(
      stopFingerprint(leaves, { ...CONFIG, instructions: null }),
    );
    expect(stopFingerprint(leaves, { ...CONFIG, instructions: normalizeInstructions('   ') })).toBe(
      stopFingerprint(leaves, { ...CONFIG, instructions: null }),
    );
  });
});

describe('shrink-only stops (issue 29, item 3)', () => {
  const digestsOf = (nodes: SubtreeNode[], config = CONFIG) =>
    leafDigests(classify(nodes, config).stoppedLeaves, config);
  /** root ─┬─ a ── a1, ─ b, ─ c (leaves a1, b, c): the reviewed stop */
  const reviewedTree = (overrides: Record<string, Partial<SubtreeNode>> = {}) => [
    ...smallTree(overrides),
    node('c', 'root', 2, overrides.c),
  ];
  const reviewed = digestsOf(reviewedTree());

  test('a stop whose leaves all were in the reviewed stop, unchanged, is shrink-only: a leaf deleted', () => {
    expect(isShrinkOnly(digestsOf(smallTree()), reviewed)).toBe(true);
  });

  test('a completed sibling removed, or a leaf moved away, is shrink-only whatever the others are', () => {
    const blockedA1 = { a1: { status: 'blocked', blockerIds: ['x'] } };
    const before = digestsOf(reviewedTree({ ...blockedA1, c: { status: 'done' } }));
    expect(isShrinkOnly(digestsOf(smallTree(blockedA1)), before)).toBe(true);
    const withoutB = reviewedTree(blockedA1).filter((n) => n.id !== 'b');
    expect(isShrinkOnly(digestsOf(withoutB), before)).toBe(true);
  });

  test.each<[string, SubtreeNode[]]>([
    ['the same stop (its fingerprint already says so)', reviewedTree()],
    ['a leaf changed while another left', smallTree({ b: { status: 'blocked' } })],
    ['a new leaf beside one that left', [...smallTree(), node('d', 'root', 2)]],
    ['a parent left without children (a new leaf)', [node('root', 'outside', 1), node('a', 'root', 2)]],
  ])('not shrink-only: %s', (_, nodes) => {
    expect(isShrinkOnly(digestsOf(nodes), reviewed)).toBe(false);
  });

  test('not shrink-only under another agent or other instructions: the review saw the leaves under its config', () => {
    expect(isShrinkOnly(digestsOf(smallTree(), { ...CONFIG, instructions: 'check the tests' }), reviewed)).toBe(false);
    expect(isShrinkOnly(digestsOf(smallTree(), { ...CONFIG, agentId: 'agent-other' }), reviewed)).toBe(false);
  });

  test('nothing reviewed (a watchdog reviewed before leaves were kept, or never) makes nothing shrink-only', () => {
    expect(isShrinkOnly(digestsOf(smallTree()), [])).toBe(false);
  });

  test('a leaf digest is its material state: stable under the order of blocker ids, changed by any material fact', () => {
    const [a1] = digestsOf([node('a1', null, 1, { blockerIds: ['x', 'y'] })]);
    expect(digestsOf([node('a1', null, 1, { blockerIds: ['y', 'x'] })])).toEqual([a1]);
    expect(digestsOf([node('a1', null, 1, { blockerIds: ['x', 'y'], createdAtMs: 0 })])).toEqual([a1]);
    expect(digestsOf([node('a1', null, 1, { blockerIds: ['x'] })])).not.toEqual([a1]);
    expect(a1).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('isReviewDisposition', () => {
  const WATCHDOG = 'agent-watchdog';
  test.each<[string, string | null, boolean]>([
    ['done', WATCHDOG, true],
    ['done', null, true],
    ['blocked', WATCHDOG, true],
    ['in_review', 'agent-reviewer', true],
    ['in_review', null, true],
    ['in_review', WATCHDOG, false],
    ['todo', WATCHDOG, false],
    ['in_progress', WATCHDOG, false],
    ['in_progress', 'agent-reviewer', false],
    ['backlog', WATCHDOG, false],
    ['cancelled', WATCHDOG, false],
  ])('a review task %s assigned to %s has reached a disposition: %s', (status, assignee, expected) => {
    expect(isReviewDisposition(status, assignee, WATCHDOG)).toBe(expected);
  });
});

describe('normalizeInstructions', () => {
  test.each<[string | null | undefined, string | null]>([
    [undefined, null],
    [null, null],
    ['', null],
    [' \n\t ', null],
    ['  check the tests  \n', 'check the tests'],
    ['line one\n  line two', 'line one\n  line two'],
  ])('%j becomes %j', (input, expected) => {
    expect(normalizeInstructions(input)).toBe(expected);
  });
});
