/**
 * Compile-time contract between the typed client and the API's OpenAPI document: the request types the
 * client sends must be exactly what the route schemas accept (checked both ways), so `npm run typecheck`
 * fails when a route's schema changes and the client does not (regenerate with `npm run openapi:types`).
 * The answers' types are the document's own; each method is checked to answer its route's type.
 */
import type * as C from './index';
import type { paths } from './openapi.gen';

type JsonBody<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Body<P extends keyof paths, M extends 'post' | 'put' | 'patch'> = JsonBody<NonNullable<paths[P][M]>>;
type Query<P extends keyof paths> =
  NonNullable<paths[P]['get']> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** every value of A is a value of B */
type Fits<A, B> = [A] extends [B] ? true : false;
/**
 * the client sends only what the route accepts, and can send all of it (same fields: an optional extra
 * one would fit too)
 */
type Same<ClientType, Documented> = [
  Fits<ClientType, Documented>,
  Fits<Documented, ClientType>,
  Fits<keyof ClientType, keyof Documented>,
  Fits<keyof Documented, keyof ClientType>,
] extends [true, true, true, true]
  ? true
  : false;
type Assert<T extends true> = T;

export type RequestTypesMatchTheDocument = [
  Assert<Same<C.CreateCompanyRequest, Body<'/api/companies', 'post'>>>,
  Assert<Same<C.CreateAgentRequest, Body<'/api/companies/{companyId}/agents', 'post'>>>,
  Assert<Same<C.UpdateAgentRequest, Body<'/api/agents/{id}', 'patch'>>>,
  Assert<Same<C.CreateIssueRequest, Body<'/api/companies/{companyId}/issues', 'post'>>>,
  Assert<Same<C.ListIssuesQuery, Query<'/api/companies/{companyId}/issues'>>>,
  Assert<Same<C.UpdateIssueRequest, Body<'/api/issues/{id}', 'patch'>>>,
  Assert<Same<{ body: string }, Body<'/api/issues/{id}/comments', 'post'>>>,
  Assert<Same<C.WakeRequest, Body<'/api/issues/{id}/wake', 'post'>>>,
  Assert<Same<C.WatchdogConfig, Body<'/api/issues/{issueId}/watchdog', 'put'>>>,
  Assert<Same<C.IssueMonitorRequest, Body<'/api/issues/{issueId}/monitor', 'put'>>>,
  Assert<Same<C.CreateInteractionRequest, Body<'/api/issues/{id}/interactions', 'post'>>>,
  Assert<Same<C.ResolveInteractionRequest, Body<'/api/interactions/{id}/resolve', 'post'>>>,
  Assert<Fits<C.PauseTreeRequest & { mode: 'pause' }, Body<'/api/issues/{id}/tree-holds', 'post'>>>,
  Assert<Fits<C.ResumeTreeRequest & { mode: 'resume' }, Body<'/api/issues/{id}/tree-holds', 'post'>>>,
  Assert<Same<C.ReleaseTreeHoldRequest, Body<'/api/issues/{id}/tree-holds/{holdId}/release', 'post'>>>,
  Assert<Same<C.StartJobRequest, Body<'/api/runs/{id}/jobs', 'post'>>>,
  Assert<Same<C.EvidenceRequest, Body<'/api/runs/{id}/evidence', 'post'>>>,
  Assert<Same<C.SilenceDecisionRequest, Body<'/api/runs/{id}/silence', 'post'>>>,
  Assert<Same<C.AcpSessionClaimRequest, Body<'/api/runs/{id}/acp-session', 'put'>>>,
  Assert<Same<C.AcpActivityReport, Body<'/api/runs/{id}/acp-activity', 'put'>>>,
  Assert<Same<C.AcpMessagesClaimRequest, Body<'/api/runs/{id}/acp-messages/claim', 'post'>>>,
  Assert<Same<C.AcpMessagesReturnRequest, Body<'/api/runs/{id}/acp-messages/return', 'post'>>>,
  Assert<Same<C.ResolveBlockerRequest, Body<'/api/execution-blockers/{id}/resolve', 'post'>>>,
  Assert<Same<C.TreeQuery, Query<'/api/issues/{id}/tree'>>>,
  Assert<Same<C.ActivityQuery, Query<'/api/issues/{id}/activity'>>>,
  Assert<Same<C.CreateWebhookRequest, Body<'/api/companies/{companyId}/webhooks', 'post'>>>,
];

type Answer<Op, S extends number> = Op extends { responses: { [K in S]: { content: { 'application/json': infer A } } } }
  ? A
  : never;
type Documented<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = Answer<
  NonNullable<paths[P][M]>,
  S
>;
type Answered<K extends keyof C.TreewardenClient> = Awaited<ReturnType<C.TreewardenClient[K]>>;

/** Each method's answer type is the document's answer of the route it calls (client/responses.ts derives them). */
export type AnswerTypesMatchTheDocument = [
  Assert<Same<Answered<'createCompany'>, Documented<'/api/companies', 'post', 201>>>,
  Assert<Same<Answered<'getIssue'>, Documented<'/api/issues/{id}', 'get'>>>,
  Assert<Same<Answered<'listRuns'>, Documented<'/api/issues/{id}/runs', 'get'>>>,
  Assert<Same<Answered<'getRun'>, Documented<'/api/runs/{id}', 'get'>>>,
  Assert<Same<Answered<'stopWork'>, Documented<'/api/work/{id}/stop', 'post'>>>,
  Assert<Same<Answered<'inspectWork'>, Documented<'/api/work/{id}/inspect', 'get'>>>,
  Assert<Same<Answered<'acknowledgeRun'>, Documented<'/api/runs/{id}/ack', 'post'>>>,
  Assert<Same<Answered<'getWatchdog'>, Documented<'/api/issues/{issueId}/watchdog', 'get'>>>,
  Assert<Same<Answered<'getIssueMonitor'>, Documented<'/api/issues/{issueId}/monitor', 'get'>>>,
  Assert<Same<Answered<'resolveInteraction'>, Documented<'/api/interactions/{id}/resolve', 'post'>>>,
  Assert<Same<Answered<'pauseTree'>, Documented<'/api/issues/{id}/tree-holds', 'post', 201>>>,
  Assert<Same<Answered<'resumeTree'>, Documented<'/api/issues/{id}/tree-holds', 'post'>>>,
  Assert<Same<Answered<'releaseTreeHold'>, Documented<'/api/issues/{id}/tree-holds/{holdId}/release', 'post'>>>,
  Assert<Same<Answered<'getTree'>, Documented<'/api/issues/{id}/tree', 'get'>>>,
  Assert<Same<Answered<'getActivity'>, Documented<'/api/issues/{id}/activity', 'get'>>>,
  Assert<
    Same<
      Answered<'listWebhookDeliveries'>,
      Documented<'/api/companies/{companyId}/webhooks/{webhookId}/deliveries', 'get'>
    >
  >,
  Assert<Same<Answered<'queuedAcpMessages'>, Documented<'/api/runs/{id}/acp-messages', 'get'>>>,
  Assert<Same<Answered<'returnAcpMessages'>, Documented<'/api/runs/{id}/acp-messages/return', 'post'>>>,
  Assert<Same<Answered<'reportAcpActivity'>, Documented<'/api/runs/{id}/acp-activity', 'put'>>>,
  Assert<Same<Answered<'getPostmortem'>, Documented<'/api/issues/{id}/postmortem', 'get'>>>,
];
