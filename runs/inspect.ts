/**
 * Read-only inspection of the ownership graph: the run, its process tree, the jobs it owns, its
 * workspace (writer lock, tombstone), lease, journal, verdict and what supersedes it. Processes and
 * workspace files are read by the owning host (through its host queue), never where the API runs;
 * inspecting spawns nothing and writes nothing.
 */
import type { Actor } from '../domain/actor';
import type { HostProbeAnswer, ProcessInfo, RunOnHost } from '../domain/host-probe';
import { isTerminalRunStatus } from '../domain/statuses';
import {
  unverifiedStopOf,
  VERDICT_ACTIONS,
  verdictOf,
  type FailureState,
  type SilenceLevel,
  type Verdict,
} from '../domain/supervision';
import { permitOnRun } from '../access/authority';
import type { Deps } from '../runtime/deps';
import { blockersByRun } from './execution-blockers';
import { resolveWork } from './work';
import { runFiles } from './run-files';

/** A process tree as its host sees it; `processes` is null (unknown, never empty) when the host did not answer. */
export type ProcessTreeView =
  | { host: string | null; visible: true; processes: ProcessInfo[] }
  | { host: string; visible: false; processes: null; detail: string };

type Owner = { id: string; hostId: string | null; ownerToken: string | null };

/** Asks each owning host once for every run and job it holds. */
async function askHosts(deps: Deps, runs: Owner[], jobs: Owner[]): Promise<Map<string, HostProbeAnswer>> {
  const hosts = new Set([...runs, ...jobs].flatMap((o) => (o.hostId ? [o.hostId] : [])));
  const answers = await Promise.all(
    [...hosts].map((hostId) =>
      deps.orchestrator.probeHost(hostId, {
        runIds: runs.filter((r) => r.hostId === hostId).map((r) => r.id),
        jobIds: jobs.filter((j) => j.hostId === hostId).map((j) => j.id),
      }),
    ),
  );
  return new Map(answers.map((answer) => [answer.hostId, answer]));
}

function treeOf(
  owner: Owner,
  answers: Map<string, HostProbeAnswer>,
  pick: (answer: HostProbeAnswer & { reachable: true }) => ProcessInfo[] | undefined,
): ProcessTreeView {
  // no host and no token: no process was ever started
  if (!owner.hostId)
    return owner.ownerToken
      ? { host: 'unknown', visible: false, processes: null, detail: 'recorded without a host id: no host can be asked' }
      : { host: null, visible: true, processes: [] };
  const answer = answers.get(owner.hostId);
  if (!answer?.reachable)
    return {
      host: owner.hostId,
      visible: false,
      processes: null,
      detail: `unreachable host ${owner.hostId}: no worker of that host answered, so its process tree is unknown`,
    };
  return { host: owner.hostId, visible: true, processes: pick(answer) ?? [] };
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
    const owner = await deps.db.run.findUniqueOrThrow({
      where: { id: job.ownerRunId },
      select: { id: true, status: true },
    });
    const tree = treeOf(job, await askHosts(deps, [], [job]), (answer) => answer.jobs[job.id]);
    const active = job.status === 'running';
    const verdict = verdictOf({
      kind: work.kind,
      active,
      failed: false,
      failureState: null,
      mustBeGone: !active,
      survivors: active ? 0 : (tree.processes?.length ?? 0),
      writersAlive: 0,
      leaseHeld: false,
      ownerTerminal: isTerminalRunStatus(owner.status),
      silence: 'ok',
      tombstone: false,
      unverifiedStop: unverifiedStopOf(job.stopResult),
    });
    return { kind: work.kind, id, job: withoutToken(job), owner, processTree: tree, ...verdictView(verdict) };
  }
  const run = work.run;
  const files = runFiles(run.id, run.workdir);
  const jobs = await deps.db.job.findMany({ where: { ownerRunId: run.id }, orderBy: { createdAt: 'asc' } });
  const answers = await askHosts(deps, [run], jobs);
  const tree = treeOf(run, answers, (answer) => answer.runs[run.id]?.processes);
  const answer = run.hostId ? answers.get(run.hostId) : undefined;
  const onHost: RunOnHost | null = answer?.reachable ? (answer.runs[run.id] ?? null) : null;
  const active = !isTerminalRunStatus(run.status);
  const writers = onHost?.writers ?? [];
  const leaseHeld =
    active &&
    run.leaseRenewedAt !== null &&
    Date.now() - run.leaseRenewedAt.getTime() < 3 * deps.config.TREEWARDEN_SUPERVISE_EVERY_MS;
  const tombstone = run.ownerToken !== null && (onHost?.tombstone ?? false);
  const verdict = verdictOf({
    kind: 'agent_run',
    active,
    failed: run.status === 'failed',
    failureState: run.failureState as FailureState | null,
    mustBeGone: !active,
    survivors: tree.processes?.length ?? 0,
    writersAlive: writers.length,
    leaseHeld,
    ownerTerminal: false,
    silence: (run.silentState ?? 'ok') as SilenceLevel,
    tombstone,
    unverifiedStop: unverifiedStopOf(run.stopResult),
  });
  const [supersededBy, evidence, findings, blockers] = await Promise.all([
    run.supersededByRunId
      ? deps.db.run.findUnique({
          where: { id: run.supersededByRunId },
          select: { id: true, status: true, finishedAt: true },
        })
      : null,
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
    jobs: jobs.map((job) => ({
      ...withoutToken(job),
      processTree: treeOf(job, answers, (a) => a.jobs[job.id]),
      ...(job.kind === 'monitor' && job.status === 'running' && !active ? verdictView('monitor-orphaned') : {}),
    })),
    workspace: {
      path: run.workdir,
      tombstone: { path: files.tombstone, matches: tombstone },
      writerLock: { path: files.writerLock, holders: onHost ? writers : null },
    },
    lease: { renewedAt: run.leaseRenewedAt, held: leaseHeld },
    journal: { path: files.journal, lastPulseAt: onHost?.journalPulseAt ?? null },
    output: { path: files.output, modifiedAt: onHost?.outputModifiedAt ?? null },
    silence: { state: run.silentState ?? 'ok', decision: run.silentDecision, until: run.silentDecisionUntil },
    failure: { state: run.failureState, inspection: run.inspection },
    supersededBy: supersededBy ? { run: supersededBy, evidence } : null,
    // a stop mid-turn without a verified checkpoint: replay waits for a person's reconciliation
    executionBlocker: blockers.get(run.id) ?? null,
    findings,
  };
}
