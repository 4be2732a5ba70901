/**
 * Gathers what a continuing or replacing run should know about the work before it, and builds its
 * capsule (domain/capsule.ts). Files of the earlier run (journal, output) are read only when they are
 * on this host; the recorded facts come from the database.
 */
import type { Run } from '../generated/prisma/client';
import {
  buildCapsule,
  type Capsule,
  type CapsuleFacts,
  type CapsuleKind,
  type StoppedLeafFacts,
} from '../domain/capsule';
import { preservedCheckpoint } from '../domain/checkpoint';
import type { DirectiveStoppedLeaf, RunDirective } from '../domain/run-directive';
import type { Deps } from '../runtime/deps';
import { readFileTail } from './output-file';
import { runFiles } from './run-files';

/** Journal lines looked at; the capsule keeps the newest that fit. */
const JOURNAL_LINES = 50;
/** Bytes read from the end of a journal or output file. */
const FILE_TAIL_BYTES = 16 * 1024;

type RunForCapsule = Pick<Run, 'id' | 'issueId' | 'wakeReason' | 'createdAt'>;

/** The capsule this run gets, or null when it continues nothing; `directive` is the run's, as parsed. */
export async function capsuleFor(deps: Deps, run: RunForCapsule, directive: RunDirective): Promise<Capsule | null> {
  const facts = await capsuleFacts(deps, run, directive);
  return facts && buildCapsule(facts);
}

async function capsuleFacts(deps: Deps, run: RunForCapsule, directive: RunDirective): Promise<CapsuleFacts | null> {
  const review = directive.taskWatchdog;
  let kind: CapsuleKind;
  let predecessorId: string | null = null;
  if (run.wakeReason === 'issue_tree_resumed' && directive.interruptedRunId) {
    kind = directive.reconciliation ? 'resume_after_reconciliation' : 'resume_after_hold';
    predecessorId = directive.interruptedRunId;
  } else if (review) {
    kind = 'watchdog_review';
  } else {
    const previous = await deps.db.run.findFirst({
      where: { issueId: run.issueId, id: { not: run.id }, createdAt: { lt: run.createdAt } },
      orderBy: { createdAt: 'desc' },
      select: { id: true, status: true },
    });
    if (!previous || !['failed', 'cancelled', 'timed_out'].includes(previous.status)) return null;
    kind = 'replacement';
    predecessorId = previous.id;
  }
  const blockerIssueIds = review ? [run.issueId, ...review.stoppedLeaves.map((l) => l.id)] : [run.issueId];
  const openBlockers = await deps.db.executionBlocker.findMany({
    where: { issueId: { in: blockerIssueIds }, status: 'active' },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return {
    kind,
    issueId: run.issueId,
    predecessor: predecessorId ? await predecessorFacts(deps, predecessorId) : null,
    openBlockers: openBlockers.map((b) => ({ id: b.id, issueId: b.issueId, cause: b.cause, nextAction: b.nextAction })),
    review: review
      ? {
          watchdogId: review.watchdogId,
          watchedIssueId: review.watchedIssueId,
          fingerprint: review.fingerprint,
          stoppedLeaves: await stoppedLeafFacts(deps, review.stoppedLeaves),
        }
      : null,
  };
}

async function predecessorFacts(deps: Deps, runId: string): Promise<CapsuleFacts['predecessor']> {
  const p = await deps.db.run.findUnique({
    where: { id: runId },
    include: {
      jobs: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
      evidence: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    },
  });
  if (!p) return null;
  const stop = (p.stopResult ?? null) as { verdict?: string; outcome?: string } | null;
  const inspection = (p.inspection ?? null) as { outputTail?: string } | null;
  const files = runFiles(p.id, p.workdir);
  const onThisHost = p.hostId === deps.hostId;
  return {
    runId: p.id,
    issueId: p.issueId,
    status: p.status,
    stopKind: p.stopKind,
    exitCode: p.exitCode,
    error: p.error,
    verdict: stop?.verdict ?? null,
    stopOutcome: stop?.outcome ?? null,
    failureState: p.failureState,
    startedAt: p.startedAt?.toISOString() ?? null,
    finishedAt: p.finishedAt?.toISOString() ?? null,
    journal: onThisHost ? lastLines(files.journal, JOURNAL_LINES) : p.hostId === null ? [] : null,
    checkpoint: preservedCheckpoint(p.stopResult),
    outputTail: inspection?.outputTail ?? (onThisHost ? readFileTail(files.output, FILE_TAIL_BYTES) : null),
    jobs: p.jobs.map((j) => ({
      id: j.id,
      kind: j.kind,
      command: [j.command, ...((j.args as string[]) ?? [])].join(' '),
      status: j.status,
      exitCode: j.exitCode,
      stopReason: j.stopReason,
      verdict: ((j.stopResult ?? null) as { verdict?: string } | null)?.verdict ?? null,
    })),
    evidence: p.evidence.map((e) => ({ check: e.check, passed: e.passed, at: e.createdAt.toISOString() })),
  };
}

async function stoppedLeafFacts(deps: Deps, leaves: DirectiveStoppedLeaf[]): Promise<StoppedLeafFacts[]> {
  const ids = leaves.map((l) => l.id);
  const [issues, runs] = await Promise.all([
    deps.db.issue.findMany({ where: { id: { in: ids } }, select: { id: true, title: true } }),
    deps.db.run.findMany({
      where: { issueId: { in: ids } },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      distinct: ['issueId'],
    }),
  ]);
  const titles = new Map(issues.map((i) => [i.id, i.title]));
  const lastRuns = new Map(runs.map((r) => [r.issueId, r]));
  const facts = leaves.map((l): StoppedLeafFacts => {
    const r = lastRuns.get(l.id);
    return {
      issueId: l.id,
      title: titles.get(l.id) ?? '',
      status: l.status,
      blockerIssueIds: l.blockerIds,
      executionBlockerIds: l.executionBlockerIds,
      pendingInteractionIds: l.pendingInteractionIds,
      lastRun: r
        ? {
            runId: r.id,
            status: r.status,
            exitCode: r.exitCode,
            failureState: r.failureState,
            finishedAt: r.finishedAt?.toISOString() ?? null,
          }
        : null,
    };
  });
  // oldest activity first, so trimming keeps the leaves that moved last
  return facts.sort(
    (a, b) =>
      (a.lastRun?.finishedAt ?? '').localeCompare(b.lastRun?.finishedAt ?? '') || a.issueId.localeCompare(b.issueId),
  );
}

function lastLines(file: string, n: number): string[] {
  const text = readFileTail(file, FILE_TAIL_BYTES);
  if (text === null) return [];
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-n);
}
