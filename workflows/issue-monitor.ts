import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { historyFull } from './history';
import type { MonitorSchedule } from '../domain/issue-monitor';
import { StateKey } from '../domain/search-attributes';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, issueMonitorClearedSignal, issueMonitorSetSignal } from './definitions';
import { IssueMonitorEntity } from './issue-monitor-entity';

// Firing is one transaction and a wake's dispatch: a minute is ample. Retried until it lands, with backoff: a monitor
// given up would be a check nobody makes, and the wake's idempotency key makes a retry after a lost answer harmless.
const monitorActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });

export interface IssueMonitorInput {
  issueId: string;
  heartbeatTimeoutMs?: number;
  /** a run continued as new: the schedule it still waited for */
  pending?: MonitorSchedule | null;
}

/** A refreshed monitor's signals grow its history; a run that long hands over to a fresh one. */
const HISTORY_EVENTS_BEFORE_CONTINUING = 2_000;

/**
 * `issue-monitor:<issueId>`: waits on a timer (the Temporal UI shows it) for the issue's monitor time, then wakes the
 * issue's assignee once (`fireIssueMonitor`); a new PUT's signal moves the timer, a DELETE's ends the wait. Completes
 * when nothing is pending.
 */
export async function issueMonitorWorkflow(input: IssueMonitorInput): Promise<void> {
  const { issueId } = input;
  const { fireIssueMonitor } = monitorActivities(input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
  const monitor = new IssueMonitorEntity(input.pending ?? null);
  setHandler(issueMonitorSetSignal, (schedule) => monitor.set(schedule));
  setHandler(issueMonitorClearedSignal, (cleared) => monitor.cleared(cleared));

  while (monitor.pending && !historyFull(HISTORY_EVENTS_BEFORE_CONTINUING)) {
    const due = monitor.pending;
    upsertSearchAttributes([{ key: StateKey, value: 'waiting' }]);
    setCurrentDetails(`wakes the assignee at ${due.at} (version ${due.version})`);
    const replaced = await condition(() => monitor.pending !== due, Math.max(0, Date.parse(due.at) - Date.now()));
    if (replaced) continue;
    setCurrentDetails(`waking the assignee (version ${due.version})`);
    monitor.fired(due, await fireIssueMonitor(issueId, due.version));
  }
  if (monitor.pending) {
    await condition(allHandlersFinished);
    return continueAsNew<typeof issueMonitorWorkflow>({ ...input, pending: monitor.pending });
  }
  upsertSearchAttributes([{ key: StateKey, value: 'done' }]);
  setCurrentDetails('nothing pending');
  await condition(allHandlersFinished);
}
