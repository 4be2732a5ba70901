/**
 * Typed HTTP client for the treewarden API, for the main app and the operator CLI.
 * One method per route; the answers' types are the OpenAPI document's (client/responses.ts), the
 * requests' are checked against it (client/contract.ts).
 */
import type { ErrorCode } from '../domain/errors';
import { path, query, transport, type CreateOptions, type TreewardenClientOptions } from './http';
import type * as Req from './requests';
import type {
  AcknowledgedRun,
  ActivityPage,
  Agent,
  BackgroundJob,
  Comment,
  CompanyOverview,
  CreatedCompany,
  CreatedWebhook,
  ExecutionBlocker,
  GateEvidence,
  Interaction,
  Issue,
  IssueWithBlockers,
  List,
  LostHost,
  Postmortem,
  ReleaseTreeHoldResult,
  ResumeTreeResult,
  Run,
  SilenceDecision,
  AcpSessionClaimed,
  AcpMessagesClaimed,
  AcpMessagesReturned,
  AcpActivityRecorded,
  AcpMessagesQueued,
  TreeHold,
  TreeHoldWithMembers,
  TreeNode,
  Wake,
  Watchdog,
  IssueMonitor,
  Webhook,
  WebhookDeliveries,
  WorkInspection,
  WorkStopResult,
} from './responses';

export type { ErrorCode };
export { TreewardenApiError, type CreateOptions, type TreewardenClientOptions } from './http';
export type * from './requests';
export type * from './responses';

export function createTreewardenClient(options: TreewardenClientOptions) {
  const call = transport(options);

  return {
    /** admin token */
    createCompany: (body: Req.CreateCompanyRequest) => call<CreatedCompany>('POST', '/api/companies', body),
    /** admin token: the host and its processes are gone for good; its pending stops settle as `host-lost` */
    declareHostLost: (hostId: string) => call<LostHost>('POST', path`/api/hosts/${hostId}/lost`),

    createAgent: (companyId: string, body: Req.CreateAgentRequest, options?: CreateOptions) =>
      call<Agent>('POST', path`/api/companies/${companyId}/agents`, body, options),
    listAgents: (companyId: string) => call<List<Agent>>('GET', path`/api/companies/${companyId}/agents`),
    updateAgent: (agentId: string, body: Req.UpdateAgentRequest) =>
      call<Agent>('PATCH', path`/api/agents/${agentId}`, body),

    createIssue: (companyId: string, body: Req.CreateIssueRequest, options?: CreateOptions) =>
      call<Issue>('POST', path`/api/companies/${companyId}/issues`, body, options),
    listIssues: (companyId: string, listQuery: Req.ListIssuesQuery = {}) =>
      call<List<Issue>>('GET', path`/api/companies/${companyId}/issues` + query({ parentId: listQuery.parentId })),
    getIssue: (issueId: string) => call<IssueWithBlockers>('GET', path`/api/issues/${issueId}`),
    listExecutionBlockers: (issueId: string) =>
      call<List<ExecutionBlocker>>('GET', path`/api/issues/${issueId}/execution-blockers`),
    /**
     * board only; 409 `conflict` when already resolved. The interrupted work then resumes once
     * (after any covering hold).
     */
    resolveExecutionBlocker: (blockerId: string, body: Req.ResolveBlockerRequest) =>
      call<ExecutionBlocker>('POST', path`/api/execution-blockers/${blockerId}/resolve`, body),
    updateIssue: (issueId: string, body: Req.UpdateIssueRequest) =>
      call<Issue>('PATCH', path`/api/issues/${issueId}`, body),
    addComment: (issueId: string, body: string, options?: CreateOptions) =>
      call<Comment>('POST', path`/api/issues/${issueId}/comments`, { body }, options),
    wakeIssue: (issueId: string, body: Req.WakeRequest = {}) =>
      call<Wake>('POST', path`/api/issues/${issueId}/wake`, body),

    listRuns: (issueId: string) => call<List<Run>>('GET', path`/api/issues/${issueId}/runs`),
    getRun: (runId: string) => call<Run>('GET', path`/api/runs/${runId}`),
    stopRun: (runId: string) => call<Run>('POST', path`/api/runs/${runId}/stop`),

    /** the one stop for an agent run, shell job or monitor id; 202 while the stop is still being verified */
    stopWork: (id: string) => call<WorkStopResult>('POST', path`/api/work/${id}/stop`),
    /** read-only: the ownership graph, the verdict and its action */
    inspectWork: (id: string) => call<WorkInspection>('GET', path`/api/work/${id}/inspect`),
    startJob: (runId: string, body: Req.StartJobRequest, options?: CreateOptions) =>
      call<BackgroundJob>('POST', path`/api/runs/${runId}/jobs`, body, options),
    recordEvidence: (runId: string, body: Req.EvidenceRequest) =>
      call<GateEvidence>('POST', path`/api/runs/${runId}/evidence`, body),
    acknowledgeRun: (runId: string) => call<AcknowledgedRun>('POST', path`/api/runs/${runId}/ack`),
    decideSilence: (runId: string, body: Req.SilenceDecisionRequest) =>
      call<SilenceDecision>('POST', path`/api/runs/${runId}/silence`, body),
    /** with the run's own token: what an acp run's supervisor does before its first prompt (409 while in use) */
    claimAcpSession: (runId: string, body: Req.AcpSessionClaimRequest) =>
      call<AcpSessionClaimed>('PUT', path`/api/runs/${runId}/acp-session`, body),
    /** with the run's own token: the messages queued for its issue, oldest first, each to one run once */
    claimAcpMessages: (runId: string, body: Req.AcpMessagesClaimRequest = {}) =>
      call<AcpMessagesClaimed>('POST', path`/api/runs/${runId}/acp-messages/claim`, body),
    /** with the run's own token: claimed messages a stop kept from their prompt go back to the issue's queue */
    returnAcpMessages: (runId: string, body: Req.AcpMessagesReturnRequest) =>
      call<AcpMessagesReturned>('POST', path`/api/runs/${runId}/acp-messages/return`, body),
    /** with the run's own token: how many messages are queued (not a sign of life for the silence watchdog) */
    queuedAcpMessages: (runId: string) => call<AcpMessagesQueued>('GET', path`/api/runs/${runId}/acp-messages`),
    /** with the run's own token: its last tool calls, message, permission decisions and usage (bounded) */
    reportAcpActivity: (runId: string, body: Req.AcpActivityReport) =>
      call<AcpActivityRecorded>('PUT', path`/api/runs/${runId}/acp-activity`, body),

    /** `null` when the issue has no active watchdog */
    getWatchdog: (issueId: string) => call<Watchdog | null>('GET', path`/api/issues/${issueId}/watchdog`),
    putWatchdog: (issueId: string, body: Req.WatchdogConfig) =>
      call<Watchdog>('PUT', path`/api/issues/${issueId}/watchdog`, body),
    /** returns the removed (now disabled) watchdog; 404 when there is none */
    deleteWatchdog: (issueId: string) => call<Watchdog>('DELETE', path`/api/issues/${issueId}/watchdog`),
    /** the pending monitor, or the last one that ended; `null` when the issue never had one */
    getIssueMonitor: (issueId: string) => call<IssueMonitor | null>('GET', path`/api/issues/${issueId}/monitor`),
    /** sets the issue's one-shot monitor, or refreshes a pending one */
    putIssueMonitor: (issueId: string, body: Req.IssueMonitorRequest) =>
      call<IssueMonitor>('PUT', path`/api/issues/${issueId}/monitor`, body),
    /** returns the cleared monitor; 404 when none is pending */
    deleteIssueMonitor: (issueId: string) => call<IssueMonitor>('DELETE', path`/api/issues/${issueId}/monitor`),

    createInteraction: (issueId: string, body: Req.CreateInteractionRequest) =>
      call<Interaction>('POST', path`/api/issues/${issueId}/interactions`, body),
    resolveInteraction: (interactionId: string, body: Req.ResolveInteractionRequest = {}) =>
      call<Interaction>('POST', path`/api/interactions/${interactionId}/resolve`, body),

    /** starts a hold on the subtree and returns once the pause is applied */
    pauseTree: (issueId: string, body: Req.PauseTreeRequest = {}) =>
      call<TreeHoldWithMembers>('POST', path`/api/issues/${issueId}/tree-holds`, { mode: 'pause', ...body }),
    resumeTree: (issueId: string, body: Req.ResumeTreeRequest = {}) =>
      call<ResumeTreeResult>('POST', path`/api/issues/${issueId}/tree-holds`, { mode: 'resume', ...body }),
    listTreeHolds: (issueId: string) => call<List<TreeHold>>('GET', path`/api/issues/${issueId}/tree-holds`),
    getTreeHold: (holdId: string) => call<TreeHoldWithMembers>('GET', path`/api/tree-holds/${holdId}`),
    /**
     * 409 `conflict` when the hold is not active (released already, or by a concurrent release);
     * 409 `reconciliation_required` with `wakeAgents` while a member has an active execution blocker
     * (`details`: `{ issueId, runId, blockerId }[]`; the hold stays active)
     */
    releaseTreeHold: (issueId: string, holdId: string, body: Req.ReleaseTreeHoldRequest = {}) =>
      call<ReleaseTreeHoldResult>('POST', path`/api/issues/${issueId}/tree-holds/${holdId}/release`, body),

    /** board only; the answer is the only place the secret is shown */
    createWebhook: (companyId: string, body: Req.CreateWebhookRequest, options?: CreateOptions) =>
      call<CreatedWebhook>('POST', path`/api/companies/${companyId}/webhooks`, body, options),
    listWebhooks: (companyId: string) => call<List<Webhook>>('GET', path`/api/companies/${companyId}/webhooks`),
    deleteWebhook: (companyId: string, webhookId: string) =>
      call<null>('DELETE', path`/api/companies/${companyId}/webhooks/${webhookId}`),
    listWebhookDeliveries: (companyId: string, webhookId: string) =>
      call<WebhookDeliveries>('GET', path`/api/companies/${companyId}/webhooks/${webhookId}/deliveries`),
    getPostmortem: (issueId: string) => call<Postmortem>('GET', path`/api/issues/${issueId}/postmortem`),
    /** the subtree with its badges, `depth` levels deep (read deeper levels by asking again) */
    getTree: (issueId: string, treeQuery: Req.TreeQuery = {}) =>
      call<TreeNode>('GET', path`/api/issues/${issueId}/tree` + query(treeQuery)),
    /** the issue's audit feed, newest first; pass `nextCursor` back as `cursor` for older entries */
    getActivity: (issueId: string, activityQuery: Req.ActivityQuery = {}) =>
      call<ActivityPage>('GET', path`/api/issues/${issueId}/activity` + query(activityQuery)),
    getOverview: (companyId: string) => call<CompanyOverview>('GET', path`/api/companies/${companyId}/overview`),
  };
}

export type TreewardenClient = ReturnType<typeof createTreewardenClient>;
