/**
 * @module The pure parts of an issue's one-shot monitor: the bounds of its time, and the workflow's state object,
 * whose versions only grow, so signals delivered out of order leave the newest schedule.
 */
import { monitorAtProblem, type MonitorSchedule } from '../../domain/issue-monitor';
import { IssueMonitorEntity } from '../../workflows/issue-monitor-entity';

const NOW = new Date('2026-12-07T12:00:00Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const schedule = (version: number, seconds = 60): MonitorSchedule => ({ at: at(seconds).toISOString(), version });

describe('monitorAtProblem', () => {
  test.each([
    [0.5, 'at: must be at least 1 second in the future'],
    [-60, 'at: must be at least 1 second in the future'],
    [90 * 86_400 + 1, 'at: must be at most 90 days in the future'],
  ])('%s s ahead is refused', (seconds, problem) => expect(monitorAtProblem(at(seconds), NOW)).toBe(problem));
  test.each([1, 3600, 90 * 86_400])('%s s ahead is within bounds', (seconds) =>
    expect(monitorAtProblem(at(seconds), NOW)).toBeNull(),
  );
});

describe('IssueMonitorEntity', () => {
  test('a newer set replaces the pending schedule; an older or equal one changes nothing', () => {
    const monitor = new IssueMonitorEntity(null);
    monitor.set(schedule(2, 60));
    monitor.set(schedule(1, 10));
    monitor.set(schedule(2, 30));
    expect(monitor.pending).toEqual(schedule(2, 60));
    monitor.set(schedule(3, 5));
    expect(monitor.pending).toEqual(schedule(3, 5));
  });

  test('a clear ends the schedule it knows of, and not a newer one', () => {
    const monitor = new IssueMonitorEntity(schedule(1));
    monitor.cleared({ version: 2 });
    expect(monitor.pending).toBeNull();
    // a set of the cleared version (delivered late) does not bring it back; a newer one does
    monitor.set(schedule(2));
    expect(monitor.pending).toBeNull();
    monitor.set(schedule(3));
    monitor.cleared({ version: 2 });
    expect(monitor.pending).toEqual(schedule(3));
  });

  test('after firing: done when fired or ended; a newer version the row holds is waited for', () => {
    const fired = new IssueMonitorEntity(schedule(1));
    fired.fired(fired.pending!, { kind: 'fired', wakeId: 'w' });
    expect(fired.pending).toBeNull();

    const ended = new IssueMonitorEntity(schedule(1));
    ended.fired(ended.pending!, { kind: 'ended', reason: 'issue_closed' });
    expect(ended.pending).toBeNull();

    // a set whose signal never came: the row's newer version is taken up
    const superseded = new IssueMonitorEntity(schedule(1));
    superseded.fired(superseded.pending!, { kind: 'superseded', current: schedule(2, 120) });
    expect(superseded.pending).toEqual(schedule(2, 120));
    const gone = new IssueMonitorEntity(schedule(1));
    gone.fired(gone.pending!, { kind: 'superseded', current: null });
    expect(gone.pending).toBeNull();
  });

  test('a schedule replaced while it fired stands', () => {
    const monitor = new IssueMonitorEntity(schedule(1));
    const due = monitor.pending!;
    monitor.set(schedule(2, 300));
    monitor.fired(due, { kind: 'superseded', current: schedule(2, 300) });
    expect(monitor.pending).toEqual(schedule(2, 300));
  });
});
