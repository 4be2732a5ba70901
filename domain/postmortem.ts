/**
 * Postmortem metrics (seed 003 P1): how much time went to work and how much to recovery, computed
 * from recorded facts (runs, stops, findings, jobs, watchdog verdicts), never from sampling. Pure:
 * postmortem/postmortem.ts reads the facts of an issue tree (or of the fleet) and this counts them.
 */

/** Why a run ended, as its agent reported it (TREEWARDEN_OUTCOME_FILE). */
export const RUN_END_REASONS = ['context_overflow'] as const;
export type RunEndReason = (typeof RUN_END_REASONS)[number];

/**
 * The reason in an agent's outcome file (`{"reason": "context_overflow"}`), or null when absent or
 * not in the vocabulary.
 */
export function parseEndReason(text: string | null): RunEndReason | null {
  if (text === null || text.length > 4096) return null;
  try {
    const reason = (JSON.parse(text) as { reason?: unknown } | null)?.reason;
    return (RUN_END_REASONS as readonly unknown[]).includes(reason) ? (reason as RunEndReason) : null;
  } catch {
    return null;
  }
}

export interface RunFacts {
  id: string;
  issueId: string;
  status: string;
  failureState: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  endReason: string | null;
  /** pids the verified stop found alive after SIGTERM (stop-partial), 0 when clean */
  stopSurvivors: number;
  /** what an acp run's agent reported (null when it reported nothing): its turns' tokens, its session's cost */
  usageTokens: number | null;
  usageCost: number | null;
  usageCurrency: string | null;
  acpSessionId: string | null;
}

export interface PostmortemFacts {
  runs: RunFacts[];
  /**
   * recorded `stopped` verdicts (a watchdog's new stop fingerprint) and the issues of the subtree they
   * watch (review task excluded)
   */
  stoppedVerdicts: { at: Date; subtreeIssueIds: string[] }[];
  /** silent-running findings, with what the run did afterwards */
  silentFindings: { runId: string; at: Date; contradicted: boolean }[];
  /** monitors stopped because their owner run ended */
  orphanMonitors: number;
  /** processes reaped as orphans (orphan-reaped findings) */
  reapedProcesses: number;
  /** jobs' verified stops that found survivors */
  jobStopSurvivors: number;
  now: Date;
}

export interface Figure {
  value: number | null;
  unit: 'seconds' | 'count' | 'tokens';
  counts: string;
}

export interface AgentUsage {
  tokens: Figure;
  cost: { amounts: { currency: string; amount: number }[]; counts: string };
  reportingRuns: number;
}

export interface Postmortem {
  window: { from: string | null; to: string; description: string };
  productiveTime: Figure;
  watchdogRecoveryTime: { p50: Figure; max: Figure; recovered: number; stillStopped: number; counts: string };
  falseStaleCount: Figure;
  orphanMonitorCount: Figure;
  contextOverflows: Figure;
  detachedProcessCount: Figure;
  agentUsage: AgentUsage;
}

const seconds = (ms: number) => Math.round(ms) / 1000;

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Tokens are per turn, so a run's add up; a cost is its session's running total, so each session counts its largest
 * (the last its runs reported) once, per currency.
 */
export function agentUsage(runs: RunFacts[]): AgentUsage {
  const reporting = runs.filter((r) => r.usageTokens !== null || r.usageCost !== null);
  const tokens = reporting.reduce<number | null>(
    (sum, r) => (r.usageTokens === null ? sum : (sum ?? 0) + r.usageTokens),
    null,
  );
  const perSession = new Map<string, { currency: string; amount: number }>();
  for (const r of reporting) {
    if (r.usageCost === null || r.usageCurrency === null) continue;
    const key = `${r.acpSessionId ?? `run:${r.id}`}\u0000${r.usageCurrency}`;
    const seen = perSession.get(key);
    if (!seen || seen.amount < r.usageCost) perSession.set(key, { currency: r.usageCurrency, amount: r.usageCost });
  }
  const byCurrency = new Map<string, number>();
  for (const { currency, amount } of perSession.values())
    byCurrency.set(currency, (byCurrency.get(currency) ?? 0) + amount);
  return {
    tokens: {
      value: tokens,
      unit: 'tokens',
      counts: 'tokens acp agents reported for their turns (ACP PromptResponse.usage), summed over runs',
    },
    cost: {
      amounts: [...byCurrency]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([currency, amount]) => ({ currency, amount })),
      counts: "acp agents' reported session cost (usage_update), each session's latest total once, per currency",
    },
    reportingRuns: reporting.length,
  };
}

export function computePostmortem(f: PostmortemFacts): Postmortem {
  const productiveMs = f.runs
    .filter((r) => (r.status === 'succeeded' || r.failureState === 'inspected') && r.startedAt && r.finishedAt)
    .reduce((sum, r) => sum + Math.max(0, r.finishedAt!.getTime() - r.startedAt!.getTime()), 0);

  const recoveries: number[] = [];
  let stillStopped = 0;
  for (const verdict of f.stoppedVerdicts) {
    const inSubtree = new Set(verdict.subtreeIssueIds);
    const next = f.runs
      .filter((r) => inSubtree.has(r.issueId) && r.startedAt && r.startedAt.getTime() >= verdict.at.getTime())
      .reduce<number | null>(
        (min, r) => (min === null ? r.startedAt!.getTime() : Math.min(min, r.startedAt!.getTime())),
        null,
      );
    if (next === null) stillStopped++;
    else recoveries.push(next - verdict.at.getTime());
  }
  recoveries.sort((a, b) => a - b);
  const p50 = percentile(recoveries, 50);
  const max = recoveries.length ? recoveries[recoveries.length - 1] : null;

  const times = [
    ...f.runs.flatMap((r) => (r.startedAt ? [r.startedAt.getTime()] : [])),
    ...f.stoppedVerdicts.map((v) => v.at.getTime()),
    ...f.silentFindings.map((s) => s.at.getTime()),
  ];
  const from = times.length ? new Date(Math.min(...times)).toISOString() : null;
  return {
    window: {
      from,
      to: f.now.toISOString(),
      description: 'every recorded fact, from the earliest run start or verdict to now',
    },
    productiveTime: {
      value: seconds(productiveMs),
      unit: 'seconds',
      counts: 'running time (start to finish) of runs that ended succeeded, or failed with an inspected result',
    },
    watchdogRecoveryTime: {
      p50: {
        value: p50 === null ? null : seconds(p50),
        unit: 'seconds',
        counts:
          'median time from a watchdog `stopped` verdict (a new stop fingerprint) ' +
          'to the next run starting in the watched subtree',
      },
      max: { value: max === null ? null : seconds(max), unit: 'seconds', counts: 'the longest such time' },
      recovered: recoveries.length,
      stillStopped,
      counts:
        'stopped verdicts whose subtree started a run again (recovered), ' +
        'and those where none has yet (stillStopped, not in p50/max)',
    },
    falseStaleCount: {
      value: f.silentFindings.filter((s) => s.contradicted).length,
      unit: 'count',
      counts:
        'silent-running grades later contradicted by the run: it called the API afterwards, ' +
        'went back to ok without an operator decision, or ended succeeded',
    },
    orphanMonitorCount: {
      value: f.orphanMonitors,
      unit: 'count',
      counts: 'monitors stopped because their owner run ended',
    },
    contextOverflows: {
      value: f.runs.filter((r) => r.endReason === 'context_overflow').length,
      unit: 'count',
      counts: 'runs whose agent reported `context_overflow` as the reason it ended',
    },
    detachedProcessCount: {
      value: f.runs.reduce((n, r) => n + r.stopSurvivors, 0) + f.jobStopSurvivors + f.reapedProcesses,
      unit: 'count',
      counts:
        'processes found alive after SIGTERM by a stop-partial stop (runs and jobs), plus processes reaped as orphans',
    },
    agentUsage: agentUsage(f.runs),
  };
}
