/**
 * Response shapes shared by routes. Each is documented in `/api/openapi.json` (the named ones as
 * `components.schemas`, which the typed client's types come from) and checked on every answer: a
 * handler that sends another shape fails (api/openapi.ts), so the document cannot drift from the server.
 */
import { z } from 'zod';
import { acpActivitySchema } from '../domain/acp-activity';
import { adapterSchema } from '../domain/adapter';
import type { ErrorCode } from '../domain/errors';
import { AGENT_STATUSES, ISSUE_STATUSES, RUN_STATUSES } from '../domain/statuses';
import { VERDICT_ACTIONS, type Verdict as VerdictName } from '../domain/supervision';
import { WATCHDOG_MODES } from '../domain/watchdog';

/** Named shapes: `components.schemas` of the document (their `$ref`s are resolved against it). */
export const componentRegistry = z.registry<{ id: string }>();
export const named = <T extends z.ZodType>(id: string, schema: T): T => {
  componentRegistry.add(schema, { id });
  return schema;
};

/** ISO-8601 on the wire; handlers may hand a Date over (JSON.stringify would write it so too). */
export const timestamp = z.preprocess(
  (value) => (value instanceof Date ? value.toISOString() : value),
  z.string().meta({ format: 'date-time' }),
);
export const uuid = z.string().meta({ format: 'uuid' });
/** a JSON object stored as the client sent it, or as a workflow reported it */
export const jsonObject = z.record(z.string(), z.unknown());

const ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'reconciliation_required',
  'subtree_incomplete',
  'unprocessable',
  'payload_too_large',
  'unavailable',
] as const satisfies readonly ErrorCode[];
export const ErrorBody = named(
  'ErrorBody',
  z.object({ error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.unknown().optional() }) }),
);

/** A 204: no body to describe or check. */
export const NO_CONTENT = { type: 'null', description: 'No content' } as const;

/** A route's answers: its successes by status, and the error body for every refusal or failure. */
export const answers = <T extends Record<number, z.ZodType | typeof NO_CONTENT>>(success: T) => ({
  ...success,
  '4xx': ErrorBody,
  '5xx': ErrorBody,
});

export const Verdict = named('Verdict', z.enum(Object.keys(VERDICT_ACTIONS) as [VerdictName, ...VerdictName[]]));
export const list = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });

export const Agent = named(
  'Agent',
  z.object({
    id: uuid,
    companyId: uuid,
    name: z.string(),
    status: z.enum(AGENT_STATUSES),
    adapter: adapterSchema,
    createdAt: timestamp,
  }),
);

export const ExecutionBlocker = named(
  'ExecutionBlocker',
  z.object({
    id: uuid,
    runId: uuid.nullable(),
    cause: z.string().meta({ description: '`stopped_mid_turn_unknown_outcome`' }),
    nextAction: z.string().meta({ description: 'what to review and how to resolve it' }),
    status: z.enum(['active', 'resolved']),
    createdAt: timestamp,
    resolvedAt: timestamp.nullable(),
    resolution: z.enum(['no_external_effects', 'effects_reviewed']).nullable(),
    note: z.string().nullable(),
  }),
);

export const Issue = named(
  'Issue',
  z.object({
    id: uuid,
    companyId: uuid,
    parentId: uuid.nullable(),
    title: z.string(),
    status: z.enum(ISSUE_STATUSES),
    assigneeAgentId: uuid.nullable(),
    originKind: z.string().meta({ description: '`manual`, `task_watchdog`, ...' }),
    originId: z.string().nullable(),
    blockedByIssueIds: z.array(uuid),
    blockedReason: z
      .string()
      .nullable()
      .meta({ description: 'while blocked: who or what unblocks it (cleared when it leaves blocked)' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  }),
);
export const IssueWithBlockers = named(
  'IssueWithBlockers',
  Issue.extend({ executionBlockers: z.array(ExecutionBlocker) }),
);

export const Comment = named(
  'Comment',
  z.object({
    id: uuid,
    issueId: uuid,
    body: z.string(),
    authorKind: z.enum(['board', 'run', 'system']),
    createdAt: timestamp,
    message: z
      .object({ forRunId: uuid, deliveredToRunId: uuid.nullable(), deliveredAt: timestamp.nullable() })
      .nullable()
      .meta({
        description:
          "a person's comment while the issue's acp run was live: a message to that agent, queued until a run of " +
          'the issue delivers it as a prompt of its session (once, in order)',
      }),
  }),
);

export const StopAttempt = named(
  'StopAttempt',
  z.object({
    signal: z.enum(['SIGTERM', 'SIGKILL']),
    verdict: z.enum(['terminal-clean', 'stop-partial']),
    survivors: z.array(z.object({ pid: z.number(), pgid: z.number(), command: z.string() })),
    writersAlive: z.number(),
  }),
);
const StopOutcome = z.enum(['preserved', 'unknown_outcome', 'before_adapter']);
/** the verified stop (`checkpoint` when preserved), or one only its host can verify; `previous`: the stop it settled */
const previous = z.unknown().optional();
export const StopResult = named(
  'StopResult',
  z.union([
    z.object({
      verdict: z.enum(['terminal-clean', 'stop-partial']),
      attempts: z.array(StopAttempt),
      verifiedAt: z.string().optional(),
      outcome: StopOutcome.optional(),
      checkpoint: jsonObject.optional(),
      outcomeReason: z.string().optional(),
      detail: z.string().optional(),
      host: z.string().optional(),
      /** an `acp` run's: its supervisor stopped first and alone (signalled by this stop or already), exited in time */
      firstLayer: z.object({ signalled: z.number(), exited: z.boolean() }).optional(),
      previous,
    }),
    z.object({
      verdict: z.literal('stop-pending'),
      host: z.string(),
      since: z.string(),
      reason: z.string().optional(),
      previous,
    }),
    z.object({ verdict: z.literal('host-lost'), host: z.string(), declaredAt: z.string(), previous }),
  ]),
);

/** an acp run's activity as its supervisor reported it (domain/acp-activity.ts bounds it) */
export const AcpActivity = named('AcpActivity', acpActivitySchema);

export const Run = named(
  'Run',
  z.object({
    id: uuid,
    companyId: uuid,
    issueId: uuid,
    agentId: uuid,
    status: z.enum(RUN_STATUSES),
    wakeReason: z.string(),
    context: jsonObject.meta({ description: "the waker's data for the agent; treewarden never interprets it" }),
    directive: jsonObject.nullable().meta({
      description: 'what treewarden told the run (review facts, resume facts, capsule); written by the server only',
    }),
    reviewWatchdogId: uuid.nullable().meta({ description: 'the watchdog whose review this run is, if any' }),
    startedAt: timestamp.nullable(),
    finishedAt: timestamp.nullable(),
    exitCode: z.number().nullable(),
    error: z.string().nullable(),
    stopKind: z.enum(['operator_hold', 'operator_stop', 'worker_lost', 'max_duration']).nullable(),
    stoppedByHoldId: uuid.nullable(),
    createdAt: timestamp,
    stopResult: StopResult.nullable(),
    failureState: z.enum(['uninspected', 'inspected', 'superseded', 'acknowledged']).nullable(),
    silentState: z.enum(['ok', 'suspicious', 'critical']).nullable(),
    supersededByRunId: uuid.nullable(),
    stopOutcome: StopOutcome.nullable().meta({
      description: '`preserved` resumes once on release; `unknown_outcome` waits for reconciliation',
    }),
    executionBlocker: ExecutionBlocker.nullable(),
    endReason: z.enum(['context_overflow']).nullable().meta({ description: 'why it ended, as its agent reported it' }),
    waitingForCompanyCapSince: timestamp.nullable().meta({
      description:
        'queued since then because its company is at its cap on running runs (TREEWARDEN_COMPANY_MAX_RUNNING_RUNS)',
    }),
    acpSession: z
      .object({ sessionId: z.string(), origin: z.string().nullable() })
      .nullable()
      .meta({ description: "an acp run's ACP session, claimed by its supervisor before its first prompt" }),
    acpActivity: AcpActivity.nullable().meta({
      description: "an acp run's last tool calls, message, permission decisions and usage, as its supervisor reported",
    }),
  }),
);

export const Wake = named(
  'Wake',
  z.object({
    id: uuid,
    status: z.enum(['queued', 'claimed', 'cancelled', 'skipped']),
    runId: uuid.nullable(),
    outcome: z.enum(['dispatched', 'deferred', 'skipped', 'not_queued']),
    holdIds: z.array(uuid).optional().meta({ description: 'the holds that defer it (`deferred`)' }),
  }),
);

export const Watchdog = named(
  'Watchdog',
  z.object({
    id: uuid,
    companyId: uuid,
    issueId: uuid,
    agentId: uuid,
    instructions: z.string().nullable(),
    mode: z.enum(WATCHDOG_MODES),
    status: z.enum(['active', 'disabled']),
    revision: z.number(),
    reviewIssueId: uuid.nullable(),
    lastObservedFingerprint: z.string().nullable(),
    lastReviewedFingerprint: z.string().nullable(),
    lastEvaluation: z.looseObject({ watchdogId: z.string(), state: z.string(), evaluatedAt: z.string() }).nullable(),
    triggerCount: z.number(),
    lastTriggeredAt: timestamp.nullable(),
    repeatLimit: z.number().meta({ description: 're-checks of one reviewed stop before escalating to people' }),
    acceptedUntil: timestamp
      .nullable()
      .meta({ description: 'the reviewed stop is accepted until then (its re-check); null: for good, or none' }),
    recheckCount: z.number().meta({ description: 're-checks of the reviewed stop so far' }),
    escalatedFingerprint: z
      .string()
      .nullable()
      .meta({ description: 'the reviewed stop escalated to people once its re-checks ran out' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  }),
);

const creatorKind = z.enum(['board', 'run', 'system']);
export const Interaction = named(
  'Interaction',
  z.object({
    id: uuid,
    companyId: uuid,
    issueId: uuid,
    kind: z.string(),
    status: z.enum(['pending', 'resolved', 'cancelled']),
    audience: z.enum(['anyone', 'human_only', 'not_creator']),
    addresseeAgentId: uuid.nullable(),
    createdByKind: creatorKind,
    createdByAgentId: uuid.nullable(),
    resolvedByKind: creatorKind.nullable(),
    resolvedByAgentId: uuid.nullable(),
    resolution: jsonObject.nullable(),
    createdAt: timestamp,
    resolvedAt: timestamp.nullable(),
  }),
);

export const CreatedCompany = named(
  'CreatedCompany',
  z.object({
    id: uuid,
    name: z.string(),
    boardToken: z.string().meta({ description: "the company's board token, shown once" }),
  }),
);
