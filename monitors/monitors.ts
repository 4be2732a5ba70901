/**
 * One-shot monitors on issues (domain/issue-monitor.ts): the row is the truth (one per issue, its `version` growing
 * with every set and clear), the `issue-monitor:<issueId>` workflow its timer. A set or a clear commits its row, then
 * signals the workflow; firing checks the row's version, so a signal that came late or never cannot fire a stale
 * time, and the wake's idempotency key makes the wake exactly one.
 */
import type { IssueMonitor } from '../generated/prisma/client';
import { issueInCompany, permitOnIssue } from '../access/authority';
import { recordSubtreeChange } from '../changes/record';
import { logActivity } from '../db/activity-log';
import type { Tx } from '../db/prisma';
import type { ScopedActor } from '../domain/actor';
import { AppError } from '../domain/errors';
import {
  ISSUE_MONITOR_WAKE_REASON,
  monitorAtProblem,
  type MonitorFiring,
  type MonitorSchedule,
} from '../domain/issue-monitor';
import { TERMINAL_ISSUE_STATUSES } from '../domain/statuses';
import type { Deps } from '../runtime/deps';
import { wakeAndDispatch } from '../dispatch/wakes';

export const scheduleOf = (monitor: IssueMonitor): MonitorSchedule => ({
  at: monitor.at.toISOString(),
  version: monitor.version,
});

/** The issue's monitor, pending or the last one that ended (null when it never had one). */
export async function issueMonitorOf(deps: Deps, actor: ScopedActor, issueId: string): Promise<IssueMonitor | null> {
  const issue = await issueInCompany(deps.db, actor, issueId);
  return deps.db.issueMonitor.findUnique({ where: { issueId: issue.id } });
}

/**
 * Sets or refreshes the issue's monitor (201 when the issue had none pending, 200 when it refreshes one), then tells
 * its workflow. A refused time, a closed issue or one with no assignee writes nothing.
 */
export async function setIssueMonitor(
  deps: Deps,
  actor: ScopedActor,
  issueId: string,
  body: { at: string; note?: string | null },
): Promise<{ monitor: IssueMonitor; refreshed: boolean }> {
  const at = new Date(body.at);
  const { monitor, refreshed, title } = await deps.db.$transaction(async (tx) => {
    const issue = await issueInCompany(tx, actor, issueId);
    await permitOnIssue(tx, actor, 'issue.monitor', issue, actor.companyId);
    const problem = monitorAtProblem(at, new Date());
    if (problem) throw new AppError('unprocessable', problem);
    if (TERMINAL_ISSUE_STATUSES.includes(issue.status))
      throw new AppError('conflict', `issue ${issue.id} is ${issue.status}: a monitor would have no one to wake`);
    if (!issue.assigneeAgentId)
      throw new AppError('conflict', `issue ${issue.id} has no assignee: a monitor wakes the issue's assignee`);
    const before = await tx.issueMonitor.findUnique({ where: { issueId } });
    const data = { at, note: body.note ?? null, status: 'pending', wakeRequestId: null, endedAt: null };
    const saved = await tx.issueMonitor.upsert({
      where: { issueId },
      create: { ...data, companyId: actor.companyId, issueId },
      update: { ...data, version: { increment: 1 } },
    });
    const wasPending = before?.status === 'pending';
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: wasPending ? 'issue.monitor_refreshed' : 'issue.monitor_set',
      entityType: 'issue',
      entityId: issueId,
      details: { at: saved.at.toISOString(), version: saved.version, note: saved.note },
    });
    await recordSubtreeChange(tx, [issueId], 'monitor_set');
    return { monitor: saved, refreshed: wasPending, title: issue.title };
  });
  await signalled(deps, monitor, () =>
    deps.orchestrator.scheduleIssueMonitor({
      issueId,
      companyId: monitor.companyId,
      title,
      schedule: scheduleOf(monitor),
    }),
  );
  return { monitor, refreshed };
}

/** Ends the issue's pending monitor (404 when none is pending). */
export async function clearIssueMonitor(deps: Deps, actor: ScopedActor, issueId: string): Promise<IssueMonitor> {
  const monitor = await deps.db.$transaction(async (tx) => {
    const issue = await issueInCompany(tx, actor, issueId);
    await permitOnIssue(tx, actor, 'issue.monitor', issue, actor.companyId);
    const [cleared] = await tx.issueMonitor.updateManyAndReturn({
      where: { issueId, status: 'pending' },
      data: { status: 'cleared', endedAt: new Date(), version: { increment: 1 } },
    });
    if (!cleared) throw new AppError('not_found', `issue ${issueId} has no pending monitor`);
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'issue.monitor_cleared',
      entityType: 'issue',
      entityId: issueId,
      details: { version: cleared.version },
    });
    await recordSubtreeChange(tx, [issueId], 'monitor_cleared');
    return cleared;
  });
  await signalled(deps, monitor, () => deps.orchestrator.issueMonitorCleared(issueId, monitor.version));
  return monitor;
}

/** A signal that failed after the commit: the row stands, and a worker's recovery schedules it again. */
async function signalled(deps: Deps, monitor: IssueMonitor, signal: () => Promise<void>): Promise<void> {
  await signal().catch((error: unknown) => {
    deps.log.warn({ err: error, issueId: monitor.issueId }, 'issue monitor signal failed');
    throw new AppError(
      'unavailable',
      `the monitor of issue ${monitor.issueId} is recorded (version ${monitor.version}), but its workflow could not ` +
        'be told; a worker schedules it at its next start, or PUT it again',
    );
  });
}

/**
 * The activity at the monitor's time: wakes the issue's assignee once (reason `issue_monitor`, the note in the
 * wake's context) when the row still holds this version and the issue is open; otherwise says why not. Safe to
 * repeat: the wake's idempotency key is the monitor's version.
 */
export async function fireIssueMonitor(deps: Deps, issueId: string, version: number): Promise<MonitorFiring> {
  const monitor = await deps.db.issueMonitor.findUnique({
    where: { issueId },
    include: { issue: { select: { status: true, assigneeAgentId: true, companyId: true } } },
  });
  if (!monitor || monitor.version !== version || !['pending', 'fired'].includes(monitor.status))
    return { kind: 'superseded', current: monitor?.status === 'pending' ? scheduleOf(monitor) : null };
  // a retry after an attempt that fired and lost its answer
  if (monitor.status === 'fired') return { kind: 'fired', wakeId: monitor.wakeRequestId! };
  const { issue } = monitor;
  const closed = TERMINAL_ISSUE_STATUSES.includes(issue.status);
  if (closed || !issue.assigneeAgentId) {
    await endMonitor(deps, monitor, 'ended');
    return { kind: 'ended', reason: closed ? 'issue_closed' : 'no_assignee' };
  }
  const system = { kind: 'system', companyId: issue.companyId } as const;
  const { wake } = await wakeAndDispatch(
    deps,
    {
      companyId: issue.companyId,
      agentId: issue.assigneeAgentId,
      issueId,
      reason: ISSUE_MONITOR_WAKE_REASON,
      context: { monitor: { at: monitor.at.toISOString(), note: monitor.note, version } },
      idempotencyKey: `issue-monitor:${monitor.id}:${version}`,
    },
    system,
  );
  await endMonitor(deps, monitor, 'fired', wake.id);
  return { kind: 'fired', wakeId: wake.id };
}

async function endMonitor(deps: Deps, monitor: IssueMonitor, status: 'fired' | 'ended', wakeRequestId?: string) {
  await deps.db.$transaction(async (tx) => {
    const { count } = await tx.issueMonitor.updateMany({
      where: { id: monitor.id, version: monitor.version, status: 'pending' },
      data: { status, endedAt: new Date(), wakeRequestId: wakeRequestId ?? null },
    });
    if (count === 0) return;
    await logActivity(tx, {
      companyId: monitor.companyId,
      actor: { kind: 'system', companyId: monitor.companyId },
      action: status === 'fired' ? 'issue.monitor_fired' : 'issue.monitor_ended',
      entityType: 'issue',
      entityId: monitor.issueId,
      details: { version: monitor.version, wakeRequestId: wakeRequestId ?? null },
    });
    await recordSubtreeChange(tx, [monitor.issueId], `monitor_${status}`);
  });
}

/** Every pending monitor, for a worker's recovery: each is scheduled again (a no-op where its workflow waits). */
export async function pendingIssueMonitors(tx: Tx) {
  return tx.issueMonitor.findMany({
    where: { status: 'pending' },
    include: { issue: { select: { title: true } } },
  });
}
