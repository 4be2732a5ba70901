/**
 * Recovery capsules (seed 003 P1): a run that continues or replaces earlier work gets a compact
 * account of that work instead of its transcript. Pure and deterministic: the same facts give the
 * same capsule, byte for byte; runs/capsule.ts gathers the facts.
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
  blockerIssueIds: readonly string[];
  executionBlockerIds: readonly string[];
  pendingInteractionIds: readonly string[];
  lastRun: {
    runId: string;
    status: string;
    exitCode: number | null;
    failureState: string | null;
    finishedAt: string | null;
  } | null;
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
    review: facts.review && {
      ...facts.review,
      stoppedLeaves: facts.review.stoppedLeaves.map((l) => ({ ...l, title: tail(l.title, TEXT_LIMITS.title) })),
    },
    omitted,
  };
  shrinkToFit(capsule);
  return capsule;
}

export const capsuleBytes = (capsule: Capsule) => Buffer.byteLength(JSON.stringify(capsule), 'utf8');

/** A part of the capsule that can give up bytes: its current size, and one step of shrinking. */
interface Shrinkable {
  bytes(): number;
  shrink(): void;
}

const jsonBytes = (value: unknown) =>
  value === null || value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * Shrinks the largest part one step at a time until the capsule fits: a list loses its oldest half,
 * the output tail its older half, an oversized checkpoint is replaced by a pointer, a long error
 * keeps its end. Every step removes bytes and parts stop offering steps once minimal, so it ends.
 */
function shrinkToFit(capsule: Capsule): void {
  const prev = capsule.previousRun;
  const count = (name: string, n: number) => (capsule.omitted[name] = (capsule.omitted[name] ?? 0) + n);
  const list = (name: string, get: () => unknown[] | null): Shrinkable => ({
    bytes: () => jsonBytes(get()),
    shrink() {
      const items = get()!;
      const drop = Math.max(1, Math.floor(items.length / 2));
      items.splice(0, drop);
      count(name, drop);
    },
  });
  const parts: Shrinkable[] = [
    list('journalLines', () => (prev && Array.isArray(prev.journal) && prev.journal.length > 0 ? prev.journal : null)),
    list('jobs', () => (prev && prev.jobs.length > 0 ? prev.jobs : null)),
    list('evidence', () => (prev && prev.evidence.length > 0 ? prev.evidence : null)),
    list('stoppedLeaves', () =>
      capsule.review && capsule.review.stoppedLeaves.length > 0 ? capsule.review.stoppedLeaves : null,
    ),
    list('openBlockers', () => (capsule.openBlockers.length > 0 ? capsule.openBlockers : null)),
    {
      bytes: () => (prev?.outputTail && prev.outputTail.length > 200 ? jsonBytes(prev.outputTail) : 0),
      shrink() {
        const before = prev!.outputTail!.length;
        prev!.outputTail = tail(prev!.outputTail!, Math.floor(before / 2));
        count('outputTailChars', before - prev!.outputTail.length);
      },
    },
    {
      bytes: () => (prev?.checkpoint && !capsule.omitted.checkpoint ? jsonBytes(prev.checkpoint) : 0),
      shrink() {
        // an agent's checkpoint is its own; one too large to carry is named, not copied
        prev!.checkpoint = {
          resumable: prev!.checkpoint!.resumable ?? null,
          omitted: 'too large for the capsule; see GET /api/runs/:id',
        };
        count('checkpoint', 1);
      },
    },
    {
      bytes: () => (prev?.error && prev.error.length > 101 ? jsonBytes(prev.error) : 0),
      shrink() {
        count('errorChars', prev!.error!.length - 100);
        prev!.error = tail(prev!.error!, 100);
      },
    },
  ];
  while (capsuleBytes(capsule) > CAPSULE_MAX_BYTES) {
    let largest: Shrinkable | null = null;
    let largestBytes = 0;
    for (const part of parts) {
      const bytes = part.bytes();
      if (bytes > largestBytes) [largest, largestBytes] = [part, bytes];
    }
    if (!largest) return;
    largest.shrink();
  }
}
