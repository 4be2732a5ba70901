/**
 * The API's answers, as its OpenAPI document describes them: derived from the generated
 * `client/openapi.gen.ts` (`npm run openapi:types`), never declared twice, so the client cannot
 * drift from the server (whose answers are checked against the same schemas when sent).
 */
import type { components, paths } from './openapi.gen';

type Schemas = components['schemas'];
type Answer<Op> = Op extends { responses: { 200: { content: { 'application/json': infer A } } } } ? A : never;
/** The 200 answer of an operation without a named shape. */
type JsonAnswer<P extends keyof paths, M extends 'get' | 'post'> = Answer<NonNullable<paths[P][M]>>;

export interface List<T> {
  items: T[];
}

/** ISO-8601 timestamp as serialized by the API. */
export type Timestamp = string;

export type CreatedCompany = Schemas['CreatedCompany'];
export type Agent = Schemas['Agent'];
export type AgentAdapter = Agent['adapter'];
export type Issue = Schemas['Issue'];
/** `GET /api/issues/:id`: the issue with its execution blockers (active and resolved, oldest first). */
export type IssueWithBlockers = Schemas['IssueWithBlockers'];
export type ExecutionBlocker = Schemas['ExecutionBlocker'];
export type BlockerResolution = NonNullable<ExecutionBlocker['resolution']>;
export type Comment = Schemas['Comment'];
export type Wake = Schemas['Wake'];

export type Run = Schemas['Run'];
/** an acp run's last tool calls, message, permission decisions and usage, as its supervisor reported them */
export type AcpActivity = Schemas['AcpActivity'];
export type AcpActivityRecorded = Schemas['AcpActivityRecorded'];
export type AcpMessagesQueued = Schemas['AcpMessagesQueued'];
export type StopOutcome = NonNullable<Run['stopOutcome']>;
export type StopResult = Schemas['StopResult'];
export type StopAttempt = Schemas['StopAttempt'];
export type Verdict = Schemas['Verdict'];
export type ProcessView = Schemas['ProcessView'];
/** A process tree as the owning host sees it; `processes` is null (
  unknown,
  not empty,
) when that host did not answer. */
export type ProcessTree = Schemas['ProcessTree'];
export type WorkKind = Schemas['WorkStopResult']['kind'];
export type WorkStopResult = Schemas['WorkStopResult'];
/** `GET /api/work/:id/inspect`; the run branch carries the whole graph */
export type WorkInspection = Schemas['WorkInspection'];
export type BackgroundJob = Schemas['BackgroundJob'];
export type GateEvidence = Schemas['GateEvidence'];
export type AcknowledgedRun = JsonAnswer<'/api/runs/{id}/ack', 'post'>;
export type SilenceDecision = JsonAnswer<'/api/runs/{id}/silence', 'post'>;
export type AcpSessionClaimed = Schemas['AcpSessionClaimed'];
export type AcpMessagesClaimed = Schemas['AcpMessagesClaimed'];
export type AcpMessagesReturned = Schemas['AcpMessagesReturned'];
/** `POST /api/hosts/:hostId/lost` */
export type LostHost = Schemas['LostHost'];

export type Watchdog = Schemas['Watchdog'];
export type IssueMonitor = Schemas['IssueMonitor'];
export type Interaction = Schemas['Interaction'];
export type InteractionAudience = Interaction['audience'];

export type TreeHold = Schemas['TreeHold'];
export type TreeHoldMember = Schemas['TreeHoldMember'];
export type TreeHoldWithMembers = Schemas['TreeHoldWithMembers'];
/** `stopState`: `verified` once every run the pause stopped is proven gone; until then its `survivors`. */
export type HoldStopState = TreeHoldWithMembers['stopState'];
export type HoldSurvivors = Schemas['HoldSurvivors'];
/** A member's `stop`: whether the stop of the run the hold interrupted is verified. */
export type RunStop = Schemas['RunStop'];
/** `resumeTree`: every active hold rooted inside the subtree, released. */
export type ResumeTreeResult = Schemas['ResumeTreeResult'];
export type ReleaseTreeHoldResult = Schemas['ReleaseTreeHoldResult'];
export type ReleaseReport = Omit<ReleaseTreeHoldResult, 'hold'>;

/** `GET /api/issues/:id/tree`: an issue with its badges, and its children to the depth asked for. */
export type TreeNode = Schemas['TreeNode'];
/** `GET /api/issues/:id/activity`: one page of the issue's audit feed, newest first */
export type ActivityPage = Schemas['ActivityPage'];
export type ActivityItem = Schemas['ActivityItem'];
/** `GET /api/companies/:companyId/overview` */
export type CompanyOverview = Schemas['CompanyOverview'];

export type Webhook = Schemas['Webhook'];
/** Only the creation's answer carries the secret. */
export type CreatedWebhook = Schemas['CreatedWebhook'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type NotificationEvent = Webhook['events'][number];
export type WebhookDeliveries = JsonAnswer<'/api/companies/{companyId}/webhooks/{webhookId}/deliveries', 'get'>;
export type Postmortem = Schemas['Postmortem'];
export type PostmortemFigure = Postmortem['productiveTime'];
