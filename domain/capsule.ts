/**
 * Recovery capsules (seed 003 P1): a run that continues or replaces earlier work gets a compact
 * account of that work instead of its transcript. Pure and deterministic: the same facts give the
 * same capsule, byte for byte; services/capsule.ts gathers the facts.
 *
 * Bounded: at most CAPSULE_MAX_BYTES serialized. When the facts are larger, the oldest entries go
 * first (journal lines, jobs, evidence, leaves) and long texts keep their end, so the newest
 * information stays; what was left out is counted in `omitted`.
 */

export const CAPSULE_MAX_BYTES = 8 * 1024;

export type CapsuleKind =
  /** a hold was released: the run it interrupted continues */
  | 'resume_after_hold'
  /** an execution blocker was resolved: the run stopped mid-turn continues */
  | 'resume_after_reconciliation'
  /** the previous run on the issue failed or was stopped: this one replaces it */
  | 'replacement'
  /** the task watchdog's review of a stopped subtree */
  | 'watchdog_review';

export interface JobFacts {
  id: string;
  kind: string;
  command: string;
  status: string;
  exitCode: number | null;
  stopReason: string | null;
  verdict: string | null;
}

export interface EvidenceFacts {
  check: string;
  passed: boolean;
  at: string;
}

export interface BlockerFacts {
  id: string;
  issueId: string;
  cause: string;
  nextAction: string;
}

/** The earlier run, as recorded. Lists are oldest first. */
export interface PredecessorFacts {
  runId: string;
  issueId: string;
  status: string;
  stopKind: string | null;
  exitCode: number | null;
  error: string | null;
  /** the verified stop's verdict (terminal-clean, stop-partial, …), or the inspection's */
  verdict: string | null;
  stopOutcome: string | null;
  failureState: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** journal lines, oldest first; null when the file is not on this host */
  journal: string[] | null;
  checkpoint: Record<string, unknown> | null;
  outputTail: string | null;
  jobs: JobFacts[];
  evidence: EvidenceFacts[];
}

export interface StoppedLeafFacts {
  issueId: string;
  title: string;
  status: string;
  blockerIssueIds: string[];
  executionBlockerIds: string[];
  pendingInteractionIds: string[];
  lastRun: { runId: string; status: string; exitCode: number | null; failureState: string | null; finishedAt: string | null } | null;
}

export interface CapsuleFacts {
  kind: CapsuleKind;
  issueId: string;
  predecessor: PredecessorFacts | null;
  openBlockers: BlockerFacts[];
  review: { watchdogId: string; watchedIssueId: string; fingerprint: string; stoppedLeaves: StoppedLeafFacts[] } | null;
}

export interface Capsule {
  version: 1;
  kind: CapsuleKind;
  issueId: string;
  previousRun: (Omit<PredecessorFacts, 'journal'> & { journal: string[] | 'not on this host' }) | null;
  openBlockers: BlockerFacts[];
  review: CapsuleFacts['review'];
  /** how many entries or characters were left out to stay within the bound */
  omitted: Record<string, number>;
}

/** Long texts keep their end: the last lines of output say how a run ended. */
const TEXT_LIMITS = { journalLine: 300, outputTail: 4000, error: 1000, command: 300, title: 200 } as const;

const tail = (text: string, max: number) => (text.length <= max ? text : `…${text.slice(text.length - max + 1)}`);

export function buildCapsule(facts: CapsuleFacts): Capsule {
  const omitted: Record<string, number> = {};
  const p = facts.predecessor;
  const capsule: Capsule = {
    version: 1,
    kind: facts.kind,
    issueId: facts.issueId,
    previousRun: p && {
      ...p,
      error: p.error === null ? null : tail(p.error, TEXT_LIMITS.error),
      outputTail: p.outputTail === null ? null : tail(p.outputTail, TEXT_LIMITS.outputTail),
      journal: p.journal === null ? 'not on this host' : p.journal.map((line) => tail(line, TEXT_LIMITS.journalLine)),
      jobs: p.jobs.map((j) => ({ ...j, command: tail(j.command, TEXT_LIMITS.command) })),
    },
    openBlockers: facts.openBlockers,
    review: facts.review && { ...facts.review, stoppedLeaves: facts.review.stoppedLeaves.map((l) => ({ ...l, title: tail(l.title, TEXT_LIMITS.title) })) },
    omitted,
  };
  shrinkToFit(capsule);
  return capsule;
}

export const capsuleBytes = (capsule: Capsule) => Buffer.byteLength(JSON.stringify(capsule), 'utf8');

/** A list the capsule may shorten, oldest entries first. */
interface Trimmable {
  name: string;
  list: () => unknown[] | null;
}

/**
 * Halves the largest trimmable list (dropping its oldest half) until the capsule fits; then shortens
 * the output tail and the checkpoint. Each step removes something, so it ends.
 */
function shrinkToFit(capsule: Capsule): void {
  const prev = capsule.previousRun;
  const lists: Trimmable[] = [
    { name: 'journalLines', list: () => (prev && Array.isArray(prev.journal) ? prev.journal : null) },
    { name: 'jobs', list: () => prev?.jobs ?? null },
    { name: 'evidence', list: () => prev?.evidence ?? null },
    { name: 'stoppedLeaves', list: () => capsule.review?.stoppedLeaves ?? null },
    { name: 'openBlockers', list: () => capsule.openBlockers },
  ];
  while (capsuleBytes(capsule) > CAPSULE_MAX_BYTES) {
    const candidates = lists.map((t) => ({ t, list: t.list() })).filter((c): c is { t: Trimmable; list: unknown[] } => c.list !== null && c.list.length > 0);
    const sizeOf = (list: unknown[]) => Buffer.byteLength(JSON.stringify(list), 'utf8');
    const largest = candidates.sort((a, b) => sizeOf(b.list) - sizeOf(a.list) || a.t.name.localeCompare(b.t.name))[0];
    const textOver = prev?.outputTail && prev.outputTail.length > 200;
    if (largest && (!textOver || sizeOf(largest.list) > Buffer.byteLength(prev!.outputTail!, 'utf8'))) {
      const drop = Math.max(1, Math.floor(largest.list.length / 2));
      largest.list.splice(0, drop);
      capsule.omitted[largest.t.name] = (capsule.omitted[largest.t.name] ?? 0) + drop;
      continue;
    }
    if (textOver) {
      const before = prev!.outputTail!.length;
      prev!.outputTail = tail(prev!.outputTail!, Math.floor(before / 2));
      capsule.omitted.outputTailChars = (capsule.omitted.outputTailChars ?? 0) + (before - prev!.outputTail.length);
      continue;
    }
    if (prev?.checkpoint && !capsule.omitted.checkpoint) {
      // an agent's checkpoint is its own; a huge one is named, not copied
      prev.checkpoint = { resumable: prev.checkpoint.resumable ?? null, omitted: 'checkpoint too large for the capsule; see GET /api/runs/:id' };
      capsule.omitted.checkpoint = 1;
      continue;
    }
    if (prev?.error && prev.error.length > 101) {
      prev.error = tail(prev.error, 100);
      capsule.omitted.errorChars = 1;
      continue;
    }
    break;
  }
}
