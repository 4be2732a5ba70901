/**
 * What the client sends. client/contract.ts checks each of these against the OpenAPI document both
 * ways at compile time (the answers are derived from it: client/responses.ts).
 */
import type { AgentStatus, IssueStatus } from '../domain/statuses';
import type { AcpActivity, BlockerResolution, InteractionAudience, NotificationEvent } from './responses';

export interface CreateCompanyRequest {
  name: string;
}

/** As `AgentAdapter`, with the defaulted fields (`args`, `env`) optional. */
export type AgentAdapterInput =
  | {
      type: 'process';
      command: string;
      args?: string[];
      env?: Record<string, string>;
      cwd?: string;
      prepare?: { command: string; args?: string[] };
    }
  | {
      type: 'acp';
      command: string;
      args?: string[];
      env?: Record<string, string>;
      cwd?: string;
      /** a person's message waits for the turn's end (default) or interrupts it (session/cancel, then the message) */
      messages?: 'after_turn' | 'interrupt';
    }
  | { type: 'noop' };

export interface CreateAgentRequest {
  name: string;
  adapter: AgentAdapterInput;
  status?: AgentStatus;
}

export interface UpdateAgentRequest {
  name?: string;
  status?: AgentStatus;
  adapter?: AgentAdapterInput;
}

/** `PUT /api/issues/:issueId/monitor` */
export interface IssueMonitorRequest {
  /** ISO-8601, 1 second to 90 days ahead: the issue's assignee is woken then (reason `issue_monitor`) */
  at: string;
  /** for the woken run: its wake's context holds `monitor: { at, note, version }` */
  note?: string | null;
}

export interface WatchdogConfig {
  agentId: string;
  instructions?: string | null;
  /**
   * `review`: a new stop wakes the agent on the review task; `observe`: it is recorded and notified, nobody woken;
   * `self`: each stopped leaf's own assignee is woken on its leaf to verify its own stop. Omitted: `review` for a new
   * watchdog, unchanged for an existing one
   */
  mode?: 'review' | 'observe' | 'self';
  /**
   * 0 to 100: re-checks of one reviewed stop (its agent woken again when a conditional acceptance runs out) before
   * escalating to people. Omitted like `mode`: 3 for a new watchdog, unchanged for an existing one
   */
  repeatLimit?: number;
}

export interface ResolveBlockerRequest {
  resolution: BlockerResolution;
  note?: string;
}

export interface CreateIssueRequest {
  title: string;
  parentId?: string | null;
  assigneeAgentId?: string | null;
  status?: IssueStatus;
  /** with `status: "blocked"`, its exit: who or what unblocks it (a new issue has no other) */
  blockedReason?: string | null;
  /** board tokens only: watch the new issue's subtree */
  watchdog?: WatchdogConfig;
}

export interface ListIssuesQuery {
  parentId?: string;
}

export interface UpdateIssueRequest {
  title?: string;
  status?: IssueStatus;
  assigneeAgentId?: string | null;
  /** replaces the whole blocker set */
  blockedByIssueIds?: string[];
  /**
   * who or what unblocks it; entering `blocked` needs this, a blocking issue, an open interaction or an active
   * execution blocker (422 otherwise); cleared when the issue leaves `blocked`
   */
  blockedReason?: string | null;
  comment?: string;
  /**
   * ISO-8601, 1 second to 90 days ahead; a watchdog review task's disposition only (status `done`, or `in_review`
   * handed to another assignee): the review accepts the stop until then, and the same stop is re-checked then
   */
  recheckAfter?: string;
}

export interface WakeRequest {
  /** a repeated key returns the existing wake (HTTP 200 instead of 202) */
  idempotencyKey?: string;
  reason?: string;
  context?: Record<string, unknown>;
}

export interface StartJobRequest {
  kind: 'shell_job' | 'monitor';
  command: string;
  args?: string[];
}

export interface EvidenceRequest {
  check: string;
  passed: boolean;
  details?: Record<string, unknown>;
}

export interface SilenceDecisionRequest {
  decision: 'snooze' | 'continue' | 'dismiss';
  minutes?: number;
}

/** `PUT /api/runs/:id/acp-session`: what an acp run's supervisor sends with its run token (acp/ledger.ts) */
export interface AcpSessionClaimRequest {
  sessionId: string;
  cwd: string;
  command: string[];
  host: string;
  origin: 'new' | 'loaded' | 'resumed';
}

/** `PUT /api/runs/:id/acp-activity`: an acp run's supervisor's report, with its run token (acp/activity.ts) */
export type AcpActivityReport = AcpActivity;

/** `POST /api/runs/:id/acp-messages/claim` */
export interface AcpMessagesClaimRequest {
  /** nothing queued means the run ends: close it to messages in the same transaction */
  last?: boolean;
}

/** `POST /api/runs/:id/acp-messages/return`: claimed messages a stop kept from their prompt */
export interface AcpMessagesReturnRequest {
  ids: string[];
}

export interface CreateInteractionRequest {
  kind: string;
  audience?: InteractionAudience;
  addresseeAgentId?: string | null;
}

export interface ResolveInteractionRequest {
  resolution?: Record<string, unknown>;
  status?: 'resolved' | 'cancelled';
}

export interface PauseTreeRequest {
  reason?: string;
}

export interface ResumeTreeRequest {
  /** also wake the other actionable members, not only the interrupted runs */
  wakeAgents?: boolean;
}

export type ReleaseTreeHoldRequest = ResumeTreeRequest;

export interface TreeQuery {
  /** levels below the issue (0: the issue alone); default 1 */
  depth?: number;
  /** pages the issue's own children */
  offset?: number;
  /** children per node, at most 500; default 200 */
  limit?: number;
}

export interface ActivityQuery {
  /** entries per page, at most 200; default 50 */
  limit?: number;
  /** the previous page's `nextCursor`: the entries older than it */
  cursor?: string;
}

export interface CreateWebhookRequest {
  /** http(s); private addresses are refused unless the service allows them */
  url: string;
  events: NotificationEvent[];
  /** at least 16 characters; generated (`whsec_…`) when absent */
  secret?: string;
}
