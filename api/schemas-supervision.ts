/** Response shapes of run supervision: stops, inspection, background jobs, gate evidence and lost hosts. */
import { ACP_SESSION_ORIGINS } from '../domain/acp-session';
import { z } from 'zod';
import { RUN_STATUSES } from '../domain/statuses';
import { ExecutionBlocker, named, Run, StopResult, timestamp, uuid, Verdict } from './schemas';

const WorkKind = z.enum(['agent_run', 'shell_job', 'monitor']);

export const ProcessView = named(
  'ProcessView',
  z.object({ pid: z.number(), ppid: z.number(), pgid: z.number(), cpuTicks: z.number(), command: z.string() }),
);
/**
 * A process tree as the owning host sees it; `processes` is null (unknown, not empty) when that host
 * did not answer.
 */
export const ProcessTree = named(
  'ProcessTree',
  z.union([
    z.object({ host: z.string().nullable(), visible: z.literal(true), processes: z.array(ProcessView) }),
    z.object({ host: z.string(), visible: z.literal(false), processes: z.null(), detail: z.string() }),
  ]),
);

export const BackgroundJob = named(
  'BackgroundJob',
  z.object({
    id: uuid,
    companyId: uuid,
    ownerRunId: uuid,
    kind: z.enum(['shell_job', 'monitor']),
    command: z.string(),
    args: z.array(z.string()),
    status: z.enum(['running', 'stopped', 'exited']),
    host: z.string().nullable(),
    hostId: z.string().nullable(),
    processGroupId: z.number().nullable(),
    exitCode: z.number().nullable(),
    stopReason: z.string().nullable(),
    stopResult: StopResult.nullable(),
    adoptions: z
      .number()
      .int()
      .meta({
        description:
          'times a worker of its host took over its supervision after its worker let go of it or died (a deploy, ' +
          'a crash): its processes ran on; 0 when never',
      }),
    createdAt: timestamp,
    finishedAt: timestamp.nullable(),
  }),
);

export const GateEvidence = named(
  'GateEvidence',
  z.object({
    id: uuid,
    runId: uuid,
    check: z.string(),
    passed: z.boolean(),
    details: z.record(z.string(), z.unknown()),
    createdAt: timestamp,
  }),
);

export const WorkStopResult = named(
  'WorkStopResult',
  z.object({
    kind: WorkKind,
    id: uuid,
    stop: z.union([StopResult, z.object({ verdict: z.literal('pending'), detail: z.string() })]),
  }),
);
// keeps the inspection's run its supervision columns (the owner token stays hidden)
// the row itself: its company-cap wait is the raw column
const InspectedRun = Run.omit({
  stopOutcome: true,
  executionBlocker: true,
  waitingForCompanyCapSince: true,
  acpSession: true,
}).extend({
  wakeRequestId: uuid.nullable(),
  companyCapQueuedAt: timestamp.nullable(),
  adapterEntered: z.boolean(),
  processGroupId: z.number().nullable(),
  stopRequestedAt: timestamp.nullable(),
  stopDetails: z.unknown(),
  updatedAt: timestamp,
  host: z.string().nullable(),
  hostId: z.string().nullable(),
  workdir: z.string().nullable(),
  leaseRenewedAt: timestamp.nullable(),
  lastApiActivityAt: timestamp.nullable(),
  inspection: z.unknown(),
  supersessionEvidenceId: uuid.nullable(),
  stateVersion: z.number(),
  silentDecision: z.string().nullable(),
  silentDecisionUntil: timestamp.nullable(),
  endReason: z.string().nullable(),
  acpSessionId: z.string().nullable(),
  acpSessionOrigin: z.string().nullable(),
  usageTokens: z.number().nullable(),
  usageCost: z.number().nullable(),
  usageCurrency: z.string().nullable(),
  acpMessagesClosedAt: timestamp.nullable(),
});
const Finding = z.object({
  id: uuid,
  runId: uuid,
  verdict: z.string(),
  stateVersion: z.number(),
  findingHash: z.string(),
  details: z.unknown(),
  createdAt: timestamp,
});

/** `GET /api/work/:id/inspect`: a job with its owner, or a run with its whole ownership graph. */
export const WorkInspection = named(
  'WorkInspection',
  z.object({
    kind: WorkKind,
    id: uuid,
    verdict: Verdict,
    action: z.string(),
    processTree: ProcessTree,
    job: BackgroundJob.optional(),
    owner: z.object({ id: uuid, status: z.enum(RUN_STATUSES) }).optional(),
    run: InspectedRun.optional(),
    jobs: z
      .array(
        BackgroundJob.extend({
          processTree: ProcessTree,
          verdict: Verdict.optional(),
          action: z.string().optional(),
        }),
      )
      .optional(),
    workspace: z
      .object({
        path: z.string().nullable(),
        tombstone: z.object({ path: z.string(), matches: z.boolean() }),
        writerLock: z.object({ path: z.string(), holders: z.array(z.number()).nullable() }),
      })
      .optional()
      .meta({ description: '`holders` is null when the owning host did not answer' }),
    lease: z.object({ renewedAt: timestamp.nullable(), held: z.boolean() }).optional(),
    journal: z.object({ path: z.string(), lastPulseAt: timestamp.nullable() }).optional(),
    output: z.object({ path: z.string(), modifiedAt: timestamp.nullable() }).optional(),
    silence: z.object({ state: z.string(), decision: z.string().nullable(), until: timestamp.nullable() }).optional(),
    failure: z.object({ state: z.string().nullable(), inspection: z.unknown() }).optional(),
    supersededBy: z
      .object({
        run: z.object({ id: uuid, status: z.enum(RUN_STATUSES), finishedAt: timestamp.nullable() }),
        evidence: GateEvidence.nullable(),
      })
      .nullable()
      .optional(),
    executionBlocker: ExecutionBlocker.nullable().optional(),
    findings: z.array(Finding).optional(),
  }),
);
export const AcknowledgedRun = z.object({
  id: uuid,
  status: z.enum(RUN_STATUSES),
  failureState: z.string().nullable(),
});
export const SilenceDecision = z.object({
  id: uuid,
  silentState: z.string().nullable(),
  decision: z.string().nullable(),
  until: timestamp.nullable(),
});
export const AcpSessionClaimed = named(
  'AcpSessionClaimed',
  z.object({
    sessionId: z.string(),
    runId: uuid,
    origin: z.enum(ACP_SESSION_ORIGINS),
    claims: z.number().meta({ description: 'how many runs have claimed the session, this one included' }),
    claimedAt: timestamp,
  }),
);
export const AcpMessagesClaimed = named(
  'AcpMessagesClaimed',
  z.object({ items: z.array(z.object({ id: uuid, body: z.string(), createdAt: timestamp })) }),
);
export const AcpMessagesQueued = named(
  'AcpMessagesQueued',
  z.object({ queued: z.number().meta({ description: "messages queued for the run's issue, not yet taken" }) }),
);
export const AcpMessagesReturned = named(
  'AcpMessagesReturned',
  z.object({ returned: z.number().meta({ description: "the run's own claimed messages now queued again" }) }),
);
export const AcpActivityRecorded = named('AcpActivityRecorded', z.object({ runId: uuid }));
export const LostHost = named(
  'LostHost',
  z.object({ hostId: z.string(), declaredAt: timestamp, settledRuns: z.number(), settledJobs: z.number() }),
);
