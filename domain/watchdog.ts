/**
 * Task-watchdog evaluation, as pure functions of the subtree's material state (seed 000,
 * "How a scan works"). Fingerprints hash material state only: never timestamps or comments,
 * so a bookkeeping write cannot re-arm the watchdog (Paperclip #9997, #10208, #10219).
 */
import { createHash } from 'node:crypto';
import { acceptsStop } from './watchdog-recheck';

export const MAX_WATCHDOG_DEPTH = 100;

/**
 * The one gate on a watchdog acting (evaluating, waking a review, backing a review run's authority, being confirmed
 * alive by its workflow): its row is active. A row deleted with its issue or company is as removed as a disabled one.
 * Where acting writes, the write also conditions on `status: 'active'` under the row's lock or in its where clause.
 */
export function watchdogMayAct<W extends { status: string }>(
  watchdog: W | null | undefined,
): watchdog is W & { status: 'active' } {
  return watchdog?.status === 'active';
}

export interface SubtreeNode {
  id: string;
  parentId: string | null;
  /** watched issue = 1 */
  depth: number;
  status: string;
  assigneeAgentId: string | null;
  /**
   * Epoch milliseconds, not a Date: parsing 10,000 timestamps was a third of reading a large subtree
   * (bench scenario 1), and the first-run grace needs only the number.
   */
  createdAtMs: number;
  hasLiveRun: boolean;
  hasQueuedWake: boolean;
  /** a one-shot monitor will wake its assignee later (domain/issue-monitor.ts): a waiting path, as a queued wake */
  hasPendingMonitor: boolean;
  hasAnyRun: boolean;
  blockerIds: readonly string[];
  pendingInteractionIds: readonly string[];
  /** active execution blockers: a run stopped mid-turn with an unknown outcome waits for a person */
  executionBlockerIds: readonly string[];
}

/** The id list of a node without any: one shared list, not 30,000 empty ones on a 10,000-issue subtree. */
export const NO_IDS: readonly string[] = Object.freeze([]);

export interface WatchdogConfig {
  agentId: string;
  instructions: string | null;
}

export type EvaluationState = 'live' | 'pending_first_run' | 'incomplete' | 'stopped';

/** What one evaluation concluded: stored on the watchdog, returned by the workflow's `state` query. */
export interface EvaluationSummary {
  watchdogId: string;
  /**
   * `review_running`: a new stop was seen while the review run is queued or running; it is recorded
   * (`fingerprint`, lastObservedFingerprint) and not dispatched. The run's end re-evaluates once.
   * `observed`: an observe-mode watchdog saw a stop; it is recorded and notified once, nobody is woken.
   * `escalated`: the reviewed stop's conditional acceptances ran out (repeatLimit); people were asked, nobody woken.
   */
  state: EvaluationState | 'already_reviewed' | 'review_running' | 'observed' | 'escalated' | 'removed';
  fingerprint: string | null;
  lastReviewedFingerprint: string | null;
  includedCount: number;
  stoppedLeafCount: number;
  liveIssueIds: string[];
  incompleteIssueIds: string[];
  woke: boolean;
  reviewIssueId: string | null;
  /** ISO-8601 */
  evaluatedAt: string;
  /**
   * ISO-8601: when the workflow evaluates again instead of at the next change or safety tick: the end of the
   * earliest first-run grace among the pending leaves (pending_first_run), or the re-check of a stop a review
   * accepted only until then (already_reviewed). Absent otherwise.
   */
  recheckAt?: string;
}

export interface StoppedLeaf {
  id: string;
  status: string;
  assigneeAgentId: string | null;
  blockerIds: readonly string[];
  pendingInteractionIds: readonly string[];
  executionBlockerIds: readonly string[];
}

export interface Classification {
  state: EvaluationState;
  includedCount: number;
  liveIssueIds: string[];
  pendingFirstRunIssueIds: string[];
  /** ISO-8601 end of the earliest first-run grace among pendingFirstRunIssueIds, else null */
  firstRunGraceEndsAt: string | null;
  /** issues at the depth limit that still have eligible children below it */
  incompleteIssueIds: string[];
  stoppedLeaves: StoppedLeaf[];
  fingerprint: string | null;
}

/**
 * `nodes` holds the walk down to depth MAX+1 (the extra level only proves incompleteness).
 */
export function classifySubtree(
  nodes: SubtreeNode[],
  config: WatchdogConfig,
  now: Date,
  firstRunGraceMs: number,
): Classification {
  const beyond = nodes.filter((n) => n.depth > MAX_WATCHDOG_DEPTH);
  const included = beyond.length > 0 ? nodes.filter((n) => n.depth <= MAX_WATCHDOG_DEPTH) : nodes;
  const base = {
    includedCount: included.length,
    liveIssueIds: [],
    pendingFirstRunIssueIds: [],
    firstRunGraceEndsAt: null,
    incompleteIssueIds: [],
    stoppedLeaves: [],
    fingerprint: null,
  };
  if (beyond.length > 0) {
    const incompleteIssueIds = [...new Set(beyond.map((n) => n.parentId!))].sort();
    return { ...base, state: 'incomplete', incompleteIssueIds };
  }
  const liveIssueIds = included
    .filter((n) => n.hasLiveRun || n.hasQueuedWake || n.hasPendingMonitor)
    .map((n) => n.id)
    .sort();
  if (liveIssueIds.length > 0) return { ...base, state: 'live', liveIssueIds };
  const pendingFirstRun = included.filter(
    (n) =>
      n.assigneeAgentId &&
      !n.hasAnyRun &&
      now.getTime() - n.createdAtMs < firstRunGraceMs &&
      !['done', 'cancelled'].includes(n.status),
  );
  if (pendingFirstRun.length > 0) {
    const earliestCreatedAt = pendingFirstRun.reduce((min, n) => Math.min(min, n.createdAtMs), Infinity);
    return {
      ...base,
      state: 'pending_first_run',
      pendingFirstRunIssueIds: pendingFirstRun.map((n) => n.id).sort(),
      firstRunGraceEndsAt: new Date(earliestCreatedAt + firstRunGraceMs).toISOString(),
    };
  }
  const parents = new Set(included.map((n) => n.parentId));
  const stoppedLeaves = included
    // a parent that waits for a person (an interaction, a reconciliation) is stopped work too
    .filter((n) => !parents.has(n.id) || n.pendingInteractionIds.length > 0 || n.executionBlockerIds.length > 0)
    .map((n) => ({
      id: n.id,
      status: n.status,
      assigneeAgentId: n.assigneeAgentId,
      blockerIds: sortedIds(n.blockerIds),
      pendingInteractionIds: sortedIds(n.pendingInteractionIds),
      executionBlockerIds: sortedIds(n.executionBlockerIds),
    }))
    // code-unit order rather than localeCompare: identical for UUIDs (so fingerprints are unchanged),
    // and ICU collation made sorting a 10k-issue subtree's leaves most of an evaluation (bench scenario 1)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { ...base, state: 'stopped', stoppedLeaves, fingerprint: stopFingerprint(stoppedLeaves, config) };
}

/** Sorted; a list of fewer than two is its own sorted copy (most leaves have no blockers). */
const sortedIds = (ids: readonly string[]): readonly string[] => (ids.length < 2 ? ids : [...ids].sort());

/**
 * A leaf's fingerprint input. Active execution blockers are material (a stranded task wakes the watchdog once,
 * resolving re-arms it); appended only when present, so fingerprints of subtrees without any are unchanged.
 */
function leafMaterial(l: StoppedLeaf): unknown[] {
  const leaf: unknown[] = [l.id, l.status, l.assigneeAgentId, l.blockerIds, l.pendingInteractionIds];
  return l.executionBlockerIds.length > 0 ? [...leaf, l.executionBlockerIds] : leaf;
}

export function stopFingerprint(leaves: StoppedLeaf[], config: WatchdogConfig): string {
  const material = { leaves: leaves.map(leafMaterial), config: [config.agentId, config.instructions] };
  return createHash('sha256').update(JSON.stringify(material)).digest('hex');
}

/**
 * One stopped leaf as a review saw it: its material state under the configuration that reviewed it (128 bits of
 * SHA-256, base64url). Two stops share a digest exactly when they share that leaf, as it was, for the same agent
 * and instructions.
 */
export function leafDigests(leaves: StoppedLeaf[], config: WatchdogConfig): string[] {
  const configMaterial = [config.agentId, config.instructions];
  return leaves.map((l) =>
    createHash('sha256')
      .update(JSON.stringify([leafMaterial(l), configMaterial]))
      .digest('base64url')
      .slice(0, 22),
  );
}

/**
 * Shrink-only stops are not new (Paperclip #10209): a stop whose every leaf was in the reviewed stop, unchanged,
 * differs from it only because leaves left the subtree (deleted, moved away, a completed sibling removed). There is
 * nothing in it a review has not seen. A parent left without children is a new leaf, so that stop is not one.
 */
export function isShrinkOnly(current: readonly string[], reviewed: readonly string[]): boolean {
  if (current.length >= reviewed.length) return false;
  const seen = new Set(reviewed);
  return current.every((digest) => seen.has(digest));
}

/** A review task has reached a disposition when it is blocked or accepts the stop (done, handed to a reviewer). */
export function isReviewDisposition(status: string, assigneeAgentId: string | null, watchdogAgentId: string): boolean {
  return status === 'blocked' || acceptsStop(status, assigneeAgentId, watchdogAgentId);
}

/**
 * What a watchdog does with a new stop: wake its agent on the review task (`review`), only record and notify it
 * (`observe`), or wake each stopped leaf's own assignee on that leaf to verify its own stop (`self`).
 */
export const WATCHDOG_MODES = ['review', 'observe', 'self'] as const;
export type WatchdogMode = (typeof WATCHDOG_MODES)[number];

export function normalizeInstructions(instructions: string | null | undefined): string | null {
  const trimmed = instructions?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

export const WATCHDOG_DEFAULT_MANDATE = [
  'Treat every stopped leaf as a claim to verify against comments, documents, work products, tests, blockers and ' +
    'review state; "I could not" or "waiting for approval" is not automatically valid.',
  'Leave genuinely complete leaves alone, with a short note on what was checked.',
  'If a leaf is not genuinely complete, restore a live path: reopen it, reassign it, ' +
    'comment actionable instructions, create a follow-up child inside the watched subtree, ' +
    'or resolve an interaction the ordinary audience permits.',
  'If the blocker is real, leave a valid waiting disposition that names the unblock owner and the next action.',
  'A blocked leaf whose exit is already resolved (blockedLeaves, exitResolved) waits for nothing: restore its live ' +
    'path or name the exit it still has.',
  'Stay inside the watched subtree and your company; never impersonate formal approvals, accept spend or hiring ' +
    'decisions, use an interaction response as downstream authority, or bypass execution-policy stages that need ' +
    'a typed reviewer or approver.',
  'Never create another watchdog, never wake yourself; this review task is the only one for the watched issue.',
  'Custom instructions may narrow this mandate or veto shortcuts, never widen it: the server grants no more ' +
    'authority whatever they say.',
  'Finish by moving your review task to done, blocked (with its exit: a blockedReason naming who or what unblocks ' +
    'it) or in_review with the evidence for your decision.',
].join('\n');

export const WATCHDOG_ALLOWED_OPERATIONS = [
  'comment on included issues',
  'create child issues under included issues',
  'assign included issues to active agents of the same company',
  'move included issues among todo, in_progress, in_review and blocked',
  'reopen done or cancelled included issues with a comment',
  'add or clear blockers within the company',
  'resolve interactions the ordinary audience allows',
  'update the review task',
] as const;

export const WATCHDOG_DENIED_OPERATIONS = [
  'writes outside the watched subtree',
  'watchdog configuration',
  'agent or company settings',
  'cancelling runs',
  'deleting anything',
] as const;

/** The mandate of a self-mode verification: the leaf's own assignee checks its own stop, inside the leaf's subtree. */
export const WATCHDOG_SELF_MANDATE = [
  "Your issue's subtree came to rest and the watchdog above it asks you to verify your own stop: treat it as a " +
    'claim to check against comments, documents, work products, tests, blockers and review state; "I could not" ' +
    'or "waiting for approval" is not automatically valid.',
  'If the work is genuinely complete, leave it done with a short note on what was checked.',
  'If it is not, restore a live path: move it back to todo or in_progress and continue, create a follow-up child ' +
    'under it, comment actionable instructions, or resolve an interaction the ordinary audience permits.',
  'If the blocker is real, leave it blocked with its exit: a blocking issue, an open interaction or a blockedReason ' +
    'naming who or what unblocks it and the next action.',
  'Stay inside your issue and its subtree; never impersonate formal approvals, accept spend or hiring decisions, or ' +
    'bypass execution-policy stages that need a typed reviewer or approver.',
  'Custom instructions may narrow this mandate, never widen it: the server grants no more authority whatever they say.',
].join('\n');
