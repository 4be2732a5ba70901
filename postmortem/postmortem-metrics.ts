/**
 * The fleet's postmortem figures on a worker's /metrics. Computed from the database at scrape time
 * (at most once per FRESH_MS, shared by every gauge; a scrape waits at most SCRAPE_WAIT_MS for it),
 * so each worker reports the same fleet-wide values: aggregate them with max(), not sum().
 */
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Db } from '../db/prisma';
import type { Postmortem } from '../domain/postmortem';
import { fleetPostmortem } from './postmortem';

/** Scrapes within this share one computation. */
const FRESH_MS = 10_000;
/** A scrape waits this long for the figures; a slow database leaves them out of that scrape, never stalls it. */
const SCRAPE_WAIT_MS = 2_000;

function within<T>(ms: number, work: Promise<T | null>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function registerPostmortemMetrics(registry: Registry, db: Db, log: Logger): void {
  let last: { at: number; value: Promise<Postmortem | null> } | null = null;
  const current = () => {
    if (!last || Date.now() - last.at > FRESH_MS) {
      last = {
        at: Date.now(),
        // a failed read leaves these gauges out of one scrape; it never fails /metrics
        value: fleetPostmortem(db).catch((error: unknown) => {
          log.warn({ err: error }, 'postmortem metrics: reading the facts failed');
          return null;
        }),
      };
    }
    return within(SCRAPE_WAIT_MS, last.value);
  };
  const gauge = (name: string, help: string, read: (p: Postmortem) => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const p = await current();
        const value = p && read(p);
        if (value !== null && value !== undefined) this.set(value);
      },
    });
  gauge(
    'treewarden_postmortem_productive_seconds',
    'Running time of runs that ended succeeded or with an inspected result (all recorded runs)',
    (p) => p.productiveTime.value,
  );
  gauge(
    'treewarden_postmortem_false_stale',
    "Silent-running grades later contradicted by the run's own activity",
    (p) => p.falseStaleCount.value,
  );
  gauge(
    'treewarden_postmortem_orphan_monitors',
    'Monitors stopped because their owner run ended',
    (p) => p.orphanMonitorCount.value,
  );
  gauge(
    'treewarden_postmortem_context_overflows',
    'Runs whose agent reported context_overflow as the reason it ended',
    (p) => p.contextOverflows.value,
  );
  gauge(
    'treewarden_postmortem_detached_processes',
    'Processes found alive after SIGTERM by stop-partial stops, plus processes reaped as orphans',
    (p) => p.detachedProcessCount.value,
  );
  gauge(
    'treewarden_postmortem_agent_tokens',
    'Tokens acp agents reported for their turns (ACP PromptResponse.usage), summed over runs',
    (p) => p.agentUsage.tokens.value,
  );
  new Gauge({
    name: 'treewarden_postmortem_agent_cost',
    help: "acp agents' reported session cost (usage_update): each session's latest total once, per currency",
    labelNames: ['currency'] as const,
    registers: [registry],
    async collect() {
      const p = await current();
      for (const { currency, amount } of p?.agentUsage.cost.amounts ?? []) this.set({ currency }, amount);
    },
  });
  new Gauge({
    name: 'treewarden_postmortem_watchdog_recovery_seconds',
    help:
      'Time from a watchdog stopped verdict to the next run starting in its subtree: ' +
      'quantile 0.5 (p50) and 1 (max)',
    labelNames: ['quantile'] as const,
    registers: [registry],
    async collect() {
      const p = await current();
      if (!p) return;
      if (p.watchdogRecoveryTime.p50.value !== null) this.set({ quantile: '0.5' }, p.watchdogRecoveryTime.p50.value);
      if (p.watchdogRecoveryTime.max.value !== null) this.set({ quantile: '1' }, p.watchdogRecoveryTime.max.value);
    },
  });
  new Gauge({
    name: 'treewarden_postmortem_watchdog_stops',
    help: 'Watchdog stopped verdicts whose subtree started a run again (recovered) or not yet (still_stopped)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const p = await current();
      if (!p) return;
      this.set({ state: 'recovered' }, p.watchdogRecoveryTime.recovered);
      this.set({ state: 'still_stopped' }, p.watchdogRecoveryTime.stillStopped);
    },
  });
}
