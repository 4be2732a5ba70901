/**
 * Typed HTTP client for the treewarden API, for the main app and the operator CLI.
 * One method per route; responses are the JSON the routes send (timestamps are ISO strings).
 */
import type { ErrorCode } from '../domain/errors';
import type { ResumeReport } from '../domain/hold-contract';
import type { AgentStatus, IssueStatus, RunStatus } from '../domain/statuses';
import type { EvaluationSummary } from '../domain/watchdog';
import type { CreatedWebhook, CreateWebhookRequest, Postmortem, Webhook, WebhookDelivery } from './notifications';

export type { ErrorCode };
export type { CreatedWebhook, CreateWebhookRequest, NotificationEvent, Postmortem, PostmortemFigure, Webhook, WebhookDelivery } from './notifications';

/** ISO-8601 timestamp as serialized by the API. */
export type Timestamp = string;

export interface TreewardenClientOptions {
  /** e.g. `http://127.0.0.1:8787` */
  baseUrl: string;
  /** admin token (companies) or a company board token (everything else) */
  token: string;
  fetch?: typeof fetch;
}

/** A non-2xx answer: the API's `{ error: { code, message, details? } }`. */
export class TreewardenApiError extends Error {
  override readonly name = 'TreewardenApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export interface List<T> {
  items: T[];
}

// ---- companies and agents ----

export interface CreateCompanyRequest {
  name: string;
}

export interface CreatedCompany {
  id: string;
  name: string;
  /** shown once: the company's board token */
  boardToken: string;
}

export type AgentAdapter =
  | { type: 'process'; command: string; args: string[]; env: Record<string, string>; cwd?: string; prepare?: { command: string; args: string[] } }
  | { type: 'noop' };

/** As `AgentAdapter`, with the defaulted fields (`args`, `env`) optional. */
export type AgentAdapterInput =
  | { type: 'process'; command: string; args?: string[]; env?: Record<string, string>; cwd?: string; prepare?: { command: string; args?: string[] } }
  | { type: 'noop' };

export interface Agent {
  id: string;
  companyId: string;
  name: string;
  status: AgentStatus;
  adapter: AgentAdapter;
  createdAt: Timestamp;
}

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

// ---- issues, comments, wakes ----

export interface WatchdogConfig {
  agentId: string;
  instructions?: string | null;
}

export interface Issue {
  id: string;
  companyId: string;
  parentId: string | null;
  title: string;
  status: IssueStatus;
  assigneeAgentId: string | null;
  /** `manual`, `task_watchdog`, ... */
  originKind: string;
  originId: string | null;
  blockedByIssueIds: string[];
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** `GET /api/issues/:id`: the issue with its execution blockers (active and resolved, oldest first). */
export interface IssueWithBlockers extends Issue {
  executionBlockers: ExecutionBlocker[];
}

export type BlockerResolution = 'no_external_effects' | 'effects_reviewed';

/** A run stopped mid-turn with an unknown outcome: its issue is not replayed until a person resolves this. */
export interface ExecutionBlocker {
  id: string;
  runId: string | null;
  /** `stopped_mid_turn_unknown_outcome` */
  cause: string;
  /** what to review and how to resolve it */
  nextAction: string;
  status: 'active' | 'resolved';
  createdAt: Timestamp;
  resolvedAt: Timestamp | null;
  resolution: BlockerResolution | null;
  note: string | null;
}

export interface ResolveBlockerRequest {
  resolution: BlockerResolution;
  note?: string;
}

/** The continuation of a stopped run: `preserved` resumes once on release; `unknown_outcome` waits for reconciliation. */
export type StopOutcome = 'preserved' | 'unknown_outcome' | 'before_adapter';

export interface CreateIssueRequest {
  title: string;
  parentId?: string | null;
  assigneeAgentId?: string | null;
  status?: IssueStatus;
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
  comment?: string;
}

export interface Comment {
  id: string;
  issueId: string;
  body: string;
  authorKind: 'board' | 'run' | 'system';
  createdAt: Timestamp;
}

export interface WakeRequest {
  /** a repeated key returns the existing wake (HTTP 200 instead of 202) */
  idempotencyKey?: string;
  reason?: string;
  context?: Record<string, unknown>;
}

export interface Wake {
  id: string;
  status: 'queued' | 'claimed' | 'cancelled' | 'skipped';
  runId: string | null;
  /** `deferred`: a tree hold covers the issue; the wake runs when it is released */
  outcome: 'dispatched' | 'deferred' | 'skipped' | 'not_queued';
  holdIds?: string[];
}

// ---- runs ----

export type Verdict = 'live-running' | 'silent-running' | 'stop-partial' | 'stop-pending' | 'host-lost' | 'failed-uninspected' | 'failed-superseded' | 'monitor-orphaned' | 'terminal-clean';

/** A process tree as the owning host sees it; `processes` is null (unknown, not empty) when that host did not answer. */
export type ProcessTree = { host: string | null; visible: true; processes: ProcessView[] } | { host: string; visible: false; processes: null; detail: string };

/** `POST /api/hosts/:hostId/lost` */
export interface LostHost {
  hostId: string;
  declaredAt: string;
  settledRuns: number;
  settledJobs: number;
}
export type WorkKind = 'agent_run' | 'shell_job' | 'monitor';

export interface StopAttempt {
  signal: 'SIGTERM' | 'SIGKILL';
  verdict: 'terminal-clean' | 'stop-partial';
  survivors: { pid: number; pgid: number; command: string }[];
  writersAlive: number;
}

export interface WorkStopResult {
  kind: WorkKind;
  id: string;
  stop:
    | { verdict: 'terminal-clean' | 'stop-partial'; attempts: StopAttempt[]; verifiedAt?: string }
    | { verdict: 'stop-pending'; host: string; since: string; reason: string }
    | { verdict: 'host-lost'; host: string; declaredAt: string }
    | { verdict: 'pending'; detail: string };
}

export interface ProcessView {
  pid: number;
  ppid: number;
  pgid: number;
  cpuTicks: number;
  command: string;
}

export interface BackgroundJob {
  id: string;
  companyId: string;
  ownerRunId: string;
  kind: 'shell_job' | 'monitor';
  command: string;
  args: string[];
  status: 'running' | 'stopped' | 'exited';
  processGroupId: number | null;
  exitCode: number | null;
  stopReason: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** `GET /api/work/:id/inspect`; the run branch carries the whole graph */
export interface WorkInspection {
  kind: WorkKind;
  id: string;
  verdict: Verdict;
  action: string;
  processTree: ProcessTree;
  run?: Run & { workdir: string | null; host: string | null };
  job?: BackgroundJob;
  jobs?: (BackgroundJob & { processTree: ProcessTree; verdict?: Verdict })[];
  /** `holders` is null when the owning host did not answer */
  workspace?: { path: string | null; tombstone: { path: string; matches: boolean }; writerLock: { path: string; holders: number[] | null } };
  lease?: { renewedAt: string | null; held: boolean };
  journal?: { path: string; lastPulseAt: string | null };
  silence?: { state: string; decision: string | null; until: string | null };
  failure?: { state: string | null; inspection: unknown };
  supersededBy?: { run: { id: string; status: RunStatus }; evidence: GateEvidence | null } | null;
  executionBlocker?: ExecutionBlocker | null;
  findings?: { id: string; verdict: Verdict; stateVersion: number; findingHash: string; details: unknown; createdAt: string }[];
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

export interface GateEvidence {
  id: string;
  runId: string;
  check: string;
  passed: boolean;
  details: Record<string, unknown>;
  createdAt: string;
}

export interface SilenceDecisionRequest {
  decision: 'snooze' | 'continue' | 'dismiss';
  minutes?: number;
}

export interface Run {
  id: string;
  companyId: string;
  issueId: string;
  agentId: string;
  status: RunStatus;
  wakeReason: string;
  context: Record<string, unknown>;
  startedAt: Timestamp | null;
  finishedAt: Timestamp | null;
  exitCode: number | null;
  error: string | null;
  stopKind: 'operator_hold' | 'operator_stop' | 'worker_lost' | null;
  stoppedByHoldId: string | null;
  /** the verified stop: `stop-partial` attempts list their survivors; `checkpoint` when preserved; pending while its host cannot verify it */
  stopResult:
    | {
        verdict: 'terminal-clean' | 'stop-partial';
        attempts: StopAttempt[];
        verifiedAt: string;
        outcome?: StopOutcome;
        checkpoint?: Record<string, unknown>;
        outcomeReason?: string;
      }
    | { verdict: 'stop-pending'; host: string; since: string; reason: string }
    | { verdict: 'host-lost'; host: string; declaredAt: string }
    | null;
  stopOutcome: StopOutcome | null;
  /** the blocker this run's stop created, if any */
  executionBlocker: ExecutionBlocker | null;
  /** why it ended, as its agent reported it (`TREEWARDEN_OUTCOME_FILE`) */
  endReason: 'context_overflow' | null;
  failureState: 'uninspected' | 'inspected' | 'superseded' | 'acknowledged' | null;
  silentState: 'ok' | 'suspicious' | 'critical' | null;
  supersededByRunId: string | null;
  createdAt: Timestamp;
}

// ---- watchdogs and interactions ----

/** The evaluation summary the service stores and the workflow's `state` query returns. */
export type WatchdogEvaluation = EvaluationSummary;

export interface Watchdog {
  id: string;
  companyId: string;
  issueId: string;
  agentId: string;
  instructions: string | null;
  status: 'active' | 'disabled';
  revision: number;
  reviewIssueId: string | null;
  lastObservedFingerprint: string | null;
  lastReviewedFingerprint: string | null;
  lastEvaluation: WatchdogEvaluation | null;
  triggerCount: number;
  lastTriggeredAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export type InteractionAudience = 'anyone' | 'human_only' | 'not_creator';

export interface Interaction {
  id: string;
  companyId: string;
  issueId: string;
  kind: string;
  status: 'pending' | 'resolved' | 'cancelled';
  audience: InteractionAudience;
  addresseeAgentId: string | null;
  createdByKind: 'board' | 'run' | 'system';
  createdByAgentId: string | null;
  resolvedByKind: 'board' | 'run' | 'system' | null;
  resolvedByAgentId: string | null;
  resolution: Record<string, unknown> | null;
  createdAt: Timestamp;
  resolvedAt: Timestamp | null;
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

// ---- tree holds ----

export interface TreeHold {
  id: string;
  companyId: string;
  rootIssueId: string;
  mode: string;
  status: 'active' | 'released';
  reason: string | null;
  appliedAt: Timestamp | null;
  releasedAt: Timestamp | null;
  /** `{ releaseId, wakeAgents, resumed?, skipped?, wakeFailures? }` once released */
  releaseResult: Record<string, unknown> | null;
  createdAt: Timestamp;
}

export interface TreeHoldMember {
  id: string;
  holdId: string;
  issueId: string;
  depth: number;
  issueStatus: IssueStatus;
  assigneeAgentId: string | null;
  activeRunId: string | null;
  activeRunStatus: RunStatus | null;
  /** the run this hold interrupted (owes a resume on release) */
  interruptedRunId: string | null;
  /** the blocker the interrupted run's stop created (unknown outcome), if any */
  executionBlocker: ExecutionBlocker | null;
}

export interface TreeHoldWithMembers extends TreeHold {
  members: TreeHoldMember[];
}

/** What a release re-dispatched: the workflow's own outcome, as the API sends it. */
export type ReleaseReport = ResumeReport;

export interface PauseTreeRequest {
  reason?: string;
}

export interface ResumeTreeRequest {
  /** also wake the other actionable members, not only the interrupted runs */
  wakeAgents?: boolean;
}

export type ReleaseTreeHoldRequest = ResumeTreeRequest;

/** `resumeTree`: every active hold rooted inside the subtree, released. */
export interface ResumeTreeResult extends ReleaseReport {
  holds: TreeHoldWithMembers[];
}

export interface ReleaseTreeHoldResult extends ReleaseReport {
  hold: TreeHoldWithMembers;
}

/**
 * For the routes that create things: a retry with the same key and the same request answers the
 * first response and writes nothing (a 503 on a write may have been applied).
 */
export interface CreateOptions {
  idempotencyKey?: string;
}

// ---- views for people (the console, `treewarden tree`) ----

export interface TreeQuery {
  /** levels below the issue (0: the issue alone); default 1 */
  depth?: number;
  /** pages the issue's own children */
  offset?: number;
  /** children per node, at most 500; default 200 */
  limit?: number;
}

/** `GET /api/issues/:id/tree`: an issue with its badges, and its children to the depth asked for. */
export interface TreeNode {
  id: string;
  title: string;
  status: IssueStatus;
  assignee: { id: string; name: string } | null;
  childCount: number;
  run: { id: string; status: RunStatus; live: boolean; silentState: string | null; failureState: string | null } | null;
  /** active holds rooted at this issue */
  holds: { id: string }[];
  /** active holds covering it (rooted here or above) */
  heldBy: string[];
  watchdog: { id: string; lastState: string | null; triggerCount: number } | null;
  blockers: { id: string; runId: string | null; nextAction: string }[];
  /** null: not expanded in this answer */
  children: TreeNode[] | null;
  moreChildren: number;
}

/** `GET /api/companies/:companyId/overview` */
export interface CompanyOverview {
  company: { id: string; name: string };
  trees: { id: string; title: string; status: IssueStatus; childCount: number; activeHolds: { id: string; reason: string | null; createdAt: Timestamp }[] }[];
  watchdogs: { id: string; issueId: string; issueTitle: string; lastState: string | null; triggerCount: number; lastTriggeredAt: Timestamp | null }[];
  runs: { id: string; issueId: string; issueTitle: string; status: RunStatus; silentState: string | null; host: string | null; startedAt: Timestamp | null }[];
  blockers: { id: string; issueId: string; issueTitle: string; runId: string | null; cause: string; nextAction: string; createdAt: Timestamp }[];
  findings: { id: string; runId: string; issueId: string; verdict: string; runStatus: RunStatus; failureState: string | null; createdAt: Timestamp }[];
}

// ---- the client ----

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 413: 'payload_too_large', 422: 'unprocessable',
};

export function createTreewardenClient({ baseUrl, token, fetch: fetchImpl = fetch }: TreewardenClientOptions) {
  const root = baseUrl.replace(/\/+$/, '');
  const path = (strings: TemplateStringsArray, ...params: string[]) =>
    strings.reduce((out, s, i) => out + s + (i < params.length ? encodeURIComponent(params[i]) : ''), '');

  async function call<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown, options: CreateOptions = {}): Promise<T> {
    const response = await fetchImpl(root + url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.ok) return (text ? JSON.parse(text) : null) as T;
    let error: { code?: ErrorCode; message?: string; details?: unknown } | undefined;
    try {
      error = (JSON.parse(text) as { error?: typeof error }).error;
    } catch {
      // not the API's error body (e.g. a proxy's page): classify by status
    }
    throw new TreewardenApiError(
      response.status,
      error?.code ?? CODE_BY_STATUS[response.status] ?? 'unavailable',
      error?.message ?? `${method} ${url}: HTTP ${response.status}`,
      error?.details,
    );
  }

  const query = (params: object) => {
    const entries = Object.entries(params).filter(([, value]) => value !== undefined);
    return entries.length ? `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}` : '';
  };

  return {
    /** admin token */
    createCompany: (body: CreateCompanyRequest) => call<CreatedCompany>('POST', '/api/companies', body),
    /** admin token: the host and its processes are gone for good; its pending stops settle as `host-lost` */
    declareHostLost: (hostId: string) => call<LostHost>('POST', path`/api/hosts/${hostId}/lost`),

    createAgent: (companyId: string, body: CreateAgentRequest, options?: CreateOptions) => call<Agent>('POST', path`/api/companies/${companyId}/agents`, body, options),
    listAgents: (companyId: string) => call<List<Agent>>('GET', path`/api/companies/${companyId}/agents`),
    updateAgent: (agentId: string, body: UpdateAgentRequest) => call<Agent>('PATCH', path`/api/agents/${agentId}`, body),

    createIssue: (companyId: string, body: CreateIssueRequest, options?: CreateOptions) => call<Issue>('POST', path`/api/companies/${companyId}/issues`, body, options),
    listIssues: (companyId: string, query: ListIssuesQuery = {}) =>
      call<List<Issue>>('GET', path`/api/companies/${companyId}/issues` + (query.parentId ? `?parentId=${encodeURIComponent(query.parentId)}` : '')),
    getIssue: (issueId: string) => call<IssueWithBlockers>('GET', path`/api/issues/${issueId}`),
    listExecutionBlockers: (issueId: string) => call<List<ExecutionBlocker>>('GET', path`/api/issues/${issueId}/execution-blockers`),
    /** board only; 409 `conflict` when already resolved. The interrupted work then resumes once (after any covering hold). */
    resolveExecutionBlocker: (blockerId: string, body: ResolveBlockerRequest) => call<ExecutionBlocker>('POST', path`/api/execution-blockers/${blockerId}/resolve`, body),
    updateIssue: (issueId: string, body: UpdateIssueRequest) => call<Issue>('PATCH', path`/api/issues/${issueId}`, body),
    addComment: (issueId: string, body: string, options?: CreateOptions) => call<Comment>('POST', path`/api/issues/${issueId}/comments`, { body }, options),
    wakeIssue: (issueId: string, body: WakeRequest = {}) => call<Wake>('POST', path`/api/issues/${issueId}/wake`, body),

    listRuns: (issueId: string) => call<List<Run>>('GET', path`/api/issues/${issueId}/runs`),
    getRun: (runId: string) => call<Run>('GET', path`/api/runs/${runId}`),
    stopRun: (runId: string) => call<Run>('POST', path`/api/runs/${runId}/stop`),

    /** the one stop for an agent run, shell job or monitor id; 202 while the stop is still being verified */
    stopWork: (id: string) => call<WorkStopResult>('POST', path`/api/work/${id}/stop`),
    /** read-only: the ownership graph, the verdict and its action */
    inspectWork: (id: string) => call<WorkInspection>('GET', path`/api/work/${id}/inspect`),
    startJob: (runId: string, body: StartJobRequest, options?: CreateOptions) => call<BackgroundJob>('POST', path`/api/runs/${runId}/jobs`, body, options),
    recordEvidence: (runId: string, body: EvidenceRequest) => call<GateEvidence>('POST', path`/api/runs/${runId}/evidence`, body),
    acknowledgeRun: (runId: string) => call<{ id: string; status: RunStatus; failureState: string | null }>('POST', path`/api/runs/${runId}/ack`),
    decideSilence: (runId: string, body: SilenceDecisionRequest) => call<{ id: string; silentState: string | null; decision: string; until: string | null }>('POST', path`/api/runs/${runId}/silence`, body),

    /** `null` when the issue has no active watchdog */
    getWatchdog: (issueId: string) => call<Watchdog | null>('GET', path`/api/issues/${issueId}/watchdog`),
    putWatchdog: (issueId: string, body: WatchdogConfig) => call<Watchdog>('PUT', path`/api/issues/${issueId}/watchdog`, body),
    /** returns the removed (now disabled) watchdog; 404 when there is none */
    deleteWatchdog: (issueId: string) => call<Watchdog>('DELETE', path`/api/issues/${issueId}/watchdog`),

    createInteraction: (issueId: string, body: CreateInteractionRequest) => call<Interaction>('POST', path`/api/issues/${issueId}/interactions`, body),
    resolveInteraction: (interactionId: string, body: ResolveInteractionRequest = {}) =>
      call<Interaction>('POST', path`/api/interactions/${interactionId}/resolve`, body),

    /** starts a hold on the subtree and returns once the pause is applied */
    pauseTree: (issueId: string, body: PauseTreeRequest = {}) =>
      call<TreeHoldWithMembers>('POST', path`/api/issues/${issueId}/tree-holds`, { mode: 'pause', ...body }),
    resumeTree: (issueId: string, body: ResumeTreeRequest = {}) =>
      call<ResumeTreeResult>('POST', path`/api/issues/${issueId}/tree-holds`, { mode: 'resume', ...body }),
    listTreeHolds: (issueId: string) => call<List<TreeHold>>('GET', path`/api/issues/${issueId}/tree-holds`),
    getTreeHold: (holdId: string) => call<TreeHoldWithMembers>('GET', path`/api/tree-holds/${holdId}`),
    /**
     * 409 `conflict` when the hold is not active (released already, or by a concurrent release);
     * 409 `reconciliation_required` with `wakeAgents` while a member has an active execution blocker
     * (`details`: `{ issueId, runId, blockerId }[]`; the hold stays active)
     */
    releaseTreeHold: (issueId: string, holdId: string, body: ReleaseTreeHoldRequest = {}) =>
      call<ReleaseTreeHoldResult>('POST', path`/api/issues/${issueId}/tree-holds/${holdId}/release`, body),

    /** board only; the answer is the only place the secret is shown */
    createWebhook: (companyId: string, body: CreateWebhookRequest, options?: CreateOptions) => call<CreatedWebhook>('POST', path`/api/companies/${companyId}/webhooks`, body, options),
    listWebhooks: (companyId: string) => call<List<Webhook>>('GET', path`/api/companies/${companyId}/webhooks`),
    deleteWebhook: (companyId: string, webhookId: string) => call<null>('DELETE', path`/api/companies/${companyId}/webhooks/${webhookId}`),
    listWebhookDeliveries: (companyId: string, webhookId: string) => call<List<WebhookDelivery> & { webhook: Webhook }>('GET', path`/api/companies/${companyId}/webhooks/${webhookId}/deliveries`),
    getPostmortem: (issueId: string) => call<Postmortem>('GET', path`/api/issues/${issueId}/postmortem`),
    /** the subtree with its badges, `depth` levels deep (read deeper levels by asking again) */
    getTree: (issueId: string, treeQuery: TreeQuery = {}) => call<TreeNode>('GET', path`/api/issues/${issueId}/tree` + query(treeQuery)),
    getOverview: (companyId: string) => call<CompanyOverview>('GET', path`/api/companies/${companyId}/overview`),
  };
}

export type TreewardenClient = ReturnType<typeof createTreewardenClient>;
