/**
 * Read-only inspection of the ownership graph: the run, its process tree, the jobs it owns, its
 * workspace (writer lock, tombstone), lease, journal, verdict and what supersedes it. Reads the
 * database and /proc only: inspecting spawns nothing and writes nothing.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Actor } from '../domain/actor';
import { isTerminalRunStatus } from '../domain/statuses';
import { VERDICT_ACTIONS, verdictOf, type FailureState, type SilenceLevel, type Verdict } from '../domain/supervision';
import { permitOnRun } from './authority';
import type { Deps } from './deps';
import { blockersByRun } from './execution-blockers';
import { resolveWork } from './jobs';
import { modifiedAt, ownedProcesses, writersAlive, type ProcessInfo } from './process-table';
import { runFiles } from './run-files';

/** Processes are visible only on the host that runs them; elsewhere the tree is unknown, not empty. */
function processTree(owner: { host: string | null; ownerToken: string | null; processGroupId: number | null }): { visible: boolean; processes: ProcessInfo[] } {
  if (!owner.ownerToken || (owner.host && owner.host !== hostname())) return { visible: owner.ownerToken === null, processes: [] };
  return { visible: true, processes: ownedProcesses(owner) };
}

function tombstoneNames(file: string, id: string): boolean {
  try {
    return readFileSync(file, 'utf8').trim() === id;
  } catch {
    return false;
  }
}

/** The owner token marks processes; it is not shown, so nothing can borrow the identity. */
function withoutToken<T extends { ownerToken: string | null }>(row: T): Omit<T, 'ownerToken'> {
  const { ownerToken: _hidden, ...rest } = row;
  return rest;
}

function verdictView(verdict: Verdict) {
  return { verdict, action: VERDICT_ACTIONS[verdict] };
}

export async function inspectWork(deps: Deps, id: string, actor: Actor) {
  const work = await resolveWork(deps, id, actor);
  // a run token inspects its own run and the jobs it owns, not its siblings
  if (work.kind === 'agent_run') permitOnRun(actor, 'run.inspect', work.run);
  else permitOnRun(actor, 'run.inspect', { id: work.job.ownerRunId, companyId: work.job.companyId });
  if (work.kind !== 'agent_run') {
    const job = work.job;
    const owner = await deps.db.run.findUniqueOrThrow({ where: { id: job.ownerRunId }, select: { id: true, status: true } });
    const tree = processTree(job);
    const active = job.status === 'running';
    const verdict = verdictOf({
      kind: work.kind,
      active,
      failed: false,
      failureState: null,
      mustBeGone: !active,
      survivors: active ? 0 : tree.processes.length,
      writersAlive: 0,
      leaseHeld: false,
      ownerTerminal: isTerminalRunStatus(owner.status),
      silence: 'ok',
      tombstone: false,
    });
    return { kind: work.kind, id, job: withoutToken(job), owner, processTree: tree, ...verdictView(verdict) };
  }
  const run = work.run;
  const files = runFiles(run.id, run.workdir);
  const tree = processTree(run);
  const jobs = await deps.db.job.findMany({ where: { ownerRunId: run.id }, orderBy: { createdAt: 'asc' } });
  const active = !isTerminalRunStatus(run.status);
  const writers = writersAlive(run.ownerToken ? files.writerLock : null);
  const leaseHeld = active && run.leaseRenewedAt !== null && Date.now() - run.leaseRenewedAt.getTime() < 3 * deps.config.TREEWARDEN_SUPERVISE_EVERY_MS;
  const tombstone = run.ownerToken !== null && tombstoneNames(files.tombstone, run.id);
  const verdict = verdictOf({
    kind: 'agent_run',
    active,
    failed: run.status === 'failed',
    failureState: run.failureState as FailureState | null,
    mustBeGone: !active,
    survivors: tree.processes.length,
    writersAlive: writers.length,
    leaseHeld,
    ownerTerminal: false,
    silence: (run.silentState ?? 'ok') as SilenceLevel,
    tombstone,
  });
  const [supersededBy, evidence, findings, blockers] = await Promise.all([
    run.supersededByRunId ? deps.db.run.findUnique({ where: { id: run.supersededByRunId }, select: { id: true, status: true, finishedAt: true } }) : null,
    run.supersessionEvidenceId ? deps.db.gateEvidence.findUnique({ where: { id: run.supersessionEvidenceId } }) : null,
    deps.db.finding.findMany({ where: { runId: run.id }, orderBy: { createdAt: 'asc' } }),
    blockersByRun(deps.db, [run.id]),
  ]);
  return {
    kind: 'agent_run' as const,
    id,
    run: withoutToken(run),
    ...verdictView(verdict),
    processTree: tree,
    jobs: jobs.map((job) => ({ ...withoutToken(job), processTree: processTree(job), ...(job.kind === 'monitor' && job.status === 'running' && !active ? verdictView('monitor-orphaned') : {}) })),
    workspace: { path: run.workdir, tombstone: { path: files.tombstone, matches: tombstone }, writerLock: { path: files.writerLock, holders: writers } },
    lease: { renewedAt: run.leaseRenewedAt, held: leaseHeld },
    journal: { path: files.journal, lastPulseAt: modifiedAt(files.journal) },
    output: { path: files.output, modifiedAt: modifiedAt(files.output) },
    silence: { state: run.silentState ?? 'ok', decision: run.silentDecision, until: run.silentDecisionUntil },
    failure: { state: run.failureState, inspection: run.inspection },
    supersededBy: supersededBy ? { run: supersededBy, evidence } : null,
    // a stop mid-turn without a verified checkpoint: replay waits for a person's reconciliation
    executionBlocker: blockers.get(run.id) ?? null,
    findings,
  };
}
