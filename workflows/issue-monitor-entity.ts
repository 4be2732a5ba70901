import type { MonitorFiring, MonitorSchedule } from '../domain/issue-monitor';

/**
 * What an issue monitor's workflow knows: the schedule it waits for. Signals only record here; the workflow's main
 * loop waits and fires. Versions only grow: a set or a clear that arrives after a newer one changes nothing, so
 * signals delivered out of order (two PUTs at once) leave the newest schedule.
 */
export class IssueMonitorEntity {
  /** the newest version this run has heard of, pending or not */
  private version: number;

  constructor(public pending: MonitorSchedule | null) {
    this.version = pending?.version ?? 0;
  }

  set(schedule: MonitorSchedule): void {
    if (schedule.version <= this.version) return;
    this.version = schedule.version;
    this.pending = schedule;
  }

  cleared({ version }: { version: number }): void {
    if (version < this.version) return;
    this.version = version;
    this.pending = null;
  }

  /** After firing `schedule`: done, unless the row had a newer version (a set whose signal never came). */
  fired(schedule: MonitorSchedule, firing: MonitorFiring): void {
    if (this.pending !== schedule) return; // a signal replaced it while it fired: the new one stands
    this.pending = null;
    if (firing.kind === 'superseded' && firing.current) this.set(firing.current);
  }
}
