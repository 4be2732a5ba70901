/**
 * The run supervision graph in the database: leases and silence while a run lives, verified stop
 * results, terminal reconciliation (inspection, supersession), acknowledgements, and findings
 * emitted once per (run, state version, finding hash).
 */
import { AppError } from '../domain/errors';
import {
  DEFAULT_SILENCE_POLICY,
  findingHash,
  lastSignOfLife,
  silenceLevel,
  type SilenceDecision,
  type FindingKind,
  type SilencePolicy,
} from '../domain/supervision';
import type { Actor } from '../domain/actor';
import { logActivity, logSystemActivity } from '../db/activity-log';
import type { Deps } from '../runtime/deps';
import { modifiedAt, type RunFiles } from './run-files';

export interface CpuSample {
  ticks: number;
  /** last time the run's processes were seen using CPU */
  at: Date | null;
}

export function silencePolicy(config: Deps['config']): SilencePolicy {
  return {
    ...DEFAULT_SILENCE_POLICY,
    suspiciousAfterMs: config.TREEWARDEN_SILENT_SUSPICIOUS_MS,
    criticalAfterMs: config.TREEWARDEN_SILENT_CRITICAL_MS,
    continueRearmMs: config.TREEWARDEN_SILENT_CONTINUE_REARM_MS,
  };
}

/** A finding is recorded (and logged) only the first time its (run, version, hash) is seen. */
export async function emitFinding(
  deps: Deps,
  runId: string,
  verdict: FindingKind,
  details: Record<string, unknown>,
): Promise<boolean> {
  const run = await deps.db.run.findUniqueOrThrow({
    where: { id: runId },
    select: { stateVersion: true, companyId: true },
  });
  const hash = findingHash(verdict, details);
  const { count } = await deps.db.finding.createMany({
    data: [{ runId, stateVersion: run.stateVersion, findingHash: hash, verdict, details: details as object }],
    skipDuplicates: true,
  });
  if (count === 0) return false;
  deps.log.warn(
    { runId, verdict, stateVersion: run.stateVersion, findingHash: hash, ...details },
    `run ${runId}: ${verdict}`,
  );
  await deps.db.$transaction((tx) =>
    logSystemActivity(tx, run.companyId, {
      action: 'run.finding',
      entityType: 'run',
      entityId: runId,
      details: { verdict, ...details },
    }),
  );
  return true;
}

/** What the supervising worker reads of a run's processes on its host (processes/ does; runs/ reads no /proc). */
export type CpuTicksOf = (run: {
  ownerToken: string | null;
  processGroupId: number | null;
  cgroupPath: string | null;
}) => number;

/**
 * Every few seconds while a run's command lives: renew its lease and grade its silence from its
 * signs of life (API calls, journal pulses, CPU use; output mtime as a fallback). Silence is
 * information only: it changes a state and emits a finding, never cancels or wakes.
 */
export async function superviseTick(
  deps: Deps,
  runId: string,
  files: RunFiles,
  last: CpuSample,
  cpuTicksOf: CpuTicksOf,
): Promise<CpuSample> {
  const now = new Date();
  const run = await deps.db.run.findUniqueOrThrow({ where: { id: runId } });
  const ticks = cpuTicksOf(run);
  const cpu = { ticks, at: last.ticks >= 0 && ticks > last.ticks ? now : last.at };
  const lastSign = lastSignOfLife({
    apiActivityAt: run.lastApiActivityAt,
    journalPulseAt: modifiedAt(files.journal),
    processActiveAt: cpu.at,
    outputModifiedAt: modifiedAt(files.output),
  });
  const level = silenceLevel(
    now,
    lastSign,
    run.startedAt ?? now,
    { kind: run.silentDecision as SilenceDecision | null, until: run.silentDecisionUntil },
    silencePolicy(deps.config),
  );
  const changed = level !== (run.silentState ?? 'ok');
  await deps.db.run.update({
    where: { id: runId },
    data: { leaseRenewedAt: now, ...(changed ? { silentState: level, stateVersion: { increment: 1 } } : {}) },
  });
  if (changed && level !== 'ok') await emitFinding(deps, runId, 'silent-running', { level });
  return cpu;
}

/** Records a verified stop; a stop that needed escalation is a `stop-partial` finding with its survivors. */
export async function recordStopResult(
  deps: Deps,
  runId: string,
  result: { verdict: string; attempts: { verdict: string; survivors: { pid: number; command: string }[] }[] } & object,
) {
  await deps.db.run.update({
    where: { id: runId },
    data: { stopResult: result as object, stateVersion: { increment: 1 } },
  });
  const partial = result.attempts.find((a) => a.verdict === 'stop-partial');
  if (partial)
    await emitFinding(deps, runId, 'stop-partial', {
      survivors: partial.survivors.map((s) => s.pid),
      escalatedTo: result.verdict,
    });
}

/**
 * A verified replacement closes earlier failures: failed runs on the issue created before a
 * succeeded run B with passing gate evidence C become `superseded` by B with C, automatically.
 */
export async function reconcileSupersession(deps: Deps, issueId: string): Promise<number> {
  const replacement = await deps.db.run.findFirst({
    where: { issueId, status: 'succeeded', evidence: { some: { passed: true } } },
    orderBy: { createdAt: 'desc' },
    include: { evidence: { where: { passed: true }, orderBy: { createdAt: 'desc' }, take: 1 } },
  });
  if (!replacement) return 0;
  const failed = await deps.db.run.findMany({
    where: {
      issueId,
      status: 'failed',
      createdAt: { lt: replacement.createdAt },
      failureState: { in: ['uninspected', 'inspected'] },
    },
  });
  for (const run of failed) {
    await deps.db.$transaction(async (tx) => {
      await tx.run.update({
        where: { id: run.id },
        data: {
          failureState: 'superseded',
          supersededByRunId: replacement.id,
          supersessionEvidenceId: replacement.evidence[0].id,
          stateVersion: { increment: 1 },
        },
      });
      await logSystemActivity(tx, run.companyId, {
        action: 'run.superseded',
        entityType: 'run',
        entityId: run.id,
        details: { supersededByRunId: replacement.id, evidenceId: replacement.evidence[0].id },
      });
    });
  }
  return failed.length;
}

/** Gate evidence C on run B; a passing check may close earlier failures on the same issue. */
export async function recordEvidence(
  deps: Deps,
  runId: string,
  evidence: { check: string; passed: boolean; details?: Record<string, unknown> },
  actor: Actor,
) {
  const run = await deps.db.run.findUniqueOrThrow({ where: { id: runId } });
  const created = await deps.db.$transaction(async (tx) => {
    const row = await tx.gateEvidence.create({
      data: { runId, check: evidence.check, passed: evidence.passed, details: (evidence.details ?? {}) as object },
    });
    await logActivity(tx, {
      companyId: run.companyId,
      actor,
      action: 'run.evidence_recorded',
      entityType: 'run',
      entityId: runId,
      details: { evidenceId: row.id, check: evidence.check, passed: evidence.passed },
    });
    return row;
  });
  if (evidence.passed) await reconcileSupersession(deps, run.issueId);
  return created;
}

/** `treewarden ack`: a person closes a failure that reconciliation could not. */
export async function acknowledgeFailure(deps: Deps, runId: string, actor: Actor) {
  const run = await deps.db.run.findUniqueOrThrow({ where: { id: runId } });
  if (run.status !== 'failed')
    throw new AppError('conflict', `run ${runId} is ${run.status}: only a failed run can be acknowledged`);
  if (run.failureState === 'acknowledged' || run.failureState === 'superseded') return run;
  return deps.db.$transaction(async (tx) => {
    const updated = await tx.run.update({
      where: { id: runId },
      data: { failureState: 'acknowledged', stateVersion: { increment: 1 } },
    });
    await logActivity(tx, {
      companyId: run.companyId,
      actor,
      action: 'run.acknowledged',
      entityType: 'run',
      entityId: runId,
      details: { previous: run.failureState },
    });
    return updated;
  });
}

/** The silent-run watchdog's decisions: snooze (for a while), continue (re-arms later), dismiss (for good). */
export async function decideSilence(
  deps: Deps,
  runId: string,
  decision: SilenceDecision,
  snoozeMinutes: number | undefined,
  actor: Actor,
) {
  const run = await deps.db.run.findUniqueOrThrow({ where: { id: runId } });
  const now = Date.now();
  const until =
    decision === 'snooze'
      ? new Date(now + (snoozeMinutes ?? 60) * 60_000)
      : decision === 'continue'
        ? new Date(now + silencePolicy(deps.config).continueRearmMs)
        : null;
  return deps.db.$transaction(async (tx) => {
    const updated = await tx.run.update({
      where: { id: runId },
      data: { silentDecision: decision, silentDecisionUntil: until, silentState: 'ok', stateVersion: { increment: 1 } },
    });
    await logActivity(tx, {
      companyId: run.companyId,
      actor,
      action: 'run.silence_decided',
      entityType: 'run',
      entityId: runId,
      details: { decision, until },
    });
    return updated;
  });
}
