/** Status vocabularies and the groupings the rules depend on. */
export const ISSUE_STATUSES = ['backlog', 'todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];
export const TERMINAL_ISSUE_STATUSES: readonly IssueStatus[] = ['done', 'cancelled'];
/** Statuses whose assignee is expected to act; `wakeAgents` on release wakes only these. */
export const ACTIONABLE_ISSUE_STATUSES: readonly IssueStatus[] = ['todo', 'in_progress', 'in_review'];

export const RUN_STATUSES = [
  'queued',
  'running',
  'scheduled_retry',
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const LIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'scheduled_retry'];
export const isTerminalRunStatus = (status: RunStatus) => !LIVE_RUN_STATUSES.includes(status);

export const AGENT_STATUSES = ['active', 'paused', 'terminated', 'pending_approval'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];
export const isInvokable = (status: AgentStatus) => status === 'active';

export const TASK_WATCHDOG_ORIGIN = 'task_watchdog';
