/** Response shapes of tree holds: a hold, its members, whether its stops are verified, and what a release did. */
import { z } from 'zod';
import { HOLD_STOP_STATES, RUN_STOP_STATES } from '../domain/hold-stops';
import { resumeReportSchema } from '../domain/resume-report';
import { ISSUE_STATUSES, RUN_STATUSES } from '../domain/statuses';
import { ExecutionBlocker, jsonObject, named, timestamp, uuid } from './schemas';

const SurvivingProcess = z.object({ pid: z.number(), pgid: z.number(), command: z.string() });
export const RunStop = named(
  'RunStop',
  z.object({
    runId: uuid,
    state: z.enum(RUN_STOP_STATES),
    verdict: z.string().nullable().meta({ description: "the run's `stopResult.verdict`, null while none is recorded" }),
    survivors: z.array(SurvivingProcess).meta({ description: 'what the last verification found alive' }),
    writersAlive: z.number().meta({ description: 'live holders of the writer lock that are not its processes' }),
  }),
);
export const HoldSurvivors = named(
  'HoldSurvivors',
  z.object({ runId: uuid, issueId: uuid, processes: z.array(SurvivingProcess), writersAlive: z.number() }),
);

export const TreeHold = named(
  'TreeHold',
  z.object({
    id: uuid,
    companyId: uuid,
    rootIssueId: uuid,
    mode: z.string(),
    status: z.enum(['active', 'released']),
    reason: z.string().nullable(),
    appliedAt: timestamp.nullable(),
    releasedAt: timestamp.nullable(),
    releaseResult: jsonObject.nullable().meta({
      description: '`{ releaseId, wakeAgents, resumed?, skipped?, wakeFailures? }` once released',
    }),
    createdAt: timestamp,
    fanningOutSince: timestamp.nullable().meta({
      description: "its release is fanning out its resumes since then (one of its company's release fan-out slots)",
    }),
    waitingForCompanyCapSince: timestamp.nullable().meta({
      description:
        'its release waits since then because its company is at its cap on release fan-outs ' +
        '(TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS); it fans out when one of them finishes',
    }),
  }),
);
export const TreeHoldMember = named(
  'TreeHoldMember',
  z.object({
    id: uuid,
    holdId: uuid,
    issueId: uuid,
    depth: z.number(),
    issueStatus: z.enum(ISSUE_STATUSES),
    assigneeAgentId: uuid.nullable(),
    activeRunId: uuid.nullable(),
    activeRunStatus: z.enum(RUN_STATUSES).nullable(),
    interruptedRunId: uuid.nullable().meta({ description: 'the run this hold interrupted (owes a resume on release)' }),
    executionBlocker: ExecutionBlocker.nullable(),
    stop: RunStop.nullable().meta({ description: 'whether the stop of the interrupted run is verified' }),
  }),
);
export const TreeHoldWithMembers = named(
  'TreeHoldWithMembers',
  TreeHold.extend({
    stopState: z.enum(HOLD_STOP_STATES).meta({
      description:
        '`verified` once every run the pause stopped is proven gone; `partial` while a verified stop left ' +
        'survivors, `pending` while a stop is unwinding or awaits its host, `host_lost` when its host was ' +
        'declared lost',
    }),
    survivors: z.array(HoldSurvivors),
    members: z.array(TreeHoldMember),
  }),
);
/** What a release did: the runs it resumed, the members it skipped (and why), the wakes that failed. */
const ReleaseReport = resumeReportSchema;
export const ResumeTreeResult = named(
  'ResumeTreeResult',
  ReleaseReport.extend({ holds: z.array(TreeHoldWithMembers) }),
);
export const ReleaseTreeHoldResult = named(
  'ReleaseTreeHoldResult',
  ReleaseReport.extend({ hold: TreeHoldWithMembers }),
);
