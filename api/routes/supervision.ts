/**
 * Run supervision: the unified stop and inspection of any background id, owner-bound jobs, evidence,
 * acknowledgement, silence decisions.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Actor } from '../../domain/actor';
import type { Action } from '../../domain/authorization';
import { AppError } from '../../domain/errors';
import { jsonRecord, safeString } from '../../domain/safe-input';
import { permitOnRun } from '../../access/authority';
import type { Deps } from '../../runtime/deps';
import { inspectWork } from '../../runs/inspect';
import { createJob } from '../../runs/jobs';
import { resolveWork, stopWorkVerified } from '../../runs/work';
import { acknowledgeFailure, decideSilence, recordEvidence } from '../../runs/supervision';
import { createOnce } from '../idempotency';
import type { ZodTypeProvider } from '../openapi';
import {
  AcknowledgedRun,
  BackgroundJob,
  GateEvidence,
  SilenceDecision,
  WorkInspection,
  WorkStopResult,
} from '../schemas-supervision';
import { answers } from '../schemas';
import { companyActor, idParams } from '../validation';

/** An action on an agent run, as domain/authorization.ts allows it. */
export async function permittedRun(deps: Deps, actor: Actor, runId: string, action: Action) {
  const work = await resolveWork(deps, runId, companyActor(actor));
  if (work.kind !== 'agent_run')
    throw new AppError('not_found', `${runId} is a ${work.kind.replace('_', ' ')}, not an agent run`);
  permitOnRun(actor, action, work.run);
  return work.run;
}

/** A job as the API shows it: its owner token stays with the job's processes. */
const presentJob = <T extends { ownerToken: string | null }>({ ownerToken: _hidden, ...job }: T) => job;

const jobSchema = z
  .object({
    kind: z.enum(['shell_job', 'monitor']),
    command: safeString().trim().min(1).max(4096),
    args: z.array(safeString().max(4096)).max(256).default([]),
  })
  .strict();
const evidenceSchema = z
  .object({ check: safeString().trim().min(1).max(200), passed: z.boolean(), details: jsonRecord().optional() })
  .strict();
const silenceSchema = z
  .object({
    decision: z.enum(['snooze', 'continue', 'dismiss']),
    minutes: z.number().int().min(1).max(10_080).optional(),
  })
  .strict();

export function registerSupervisionRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  /** Stops an agent run, shell job or monitor by id, and reports the verified result when it is in. */
  api.post(
    '/api/work/:id/stop',
    {
      schema: {
        summary: 'Stop an agent run, shell job or monitor by id; 202 while the stop is being verified',
        params: idParams('id'),
        response: answers({ 200: WorkStopResult, 202: WorkStopResult }),
      },
    },
    async (request, reply) => {
      const { kind, id, stop } = await stopWorkVerified(deps, request.params.id, companyActor(request.actor));
      return reply.status(stop ? 200 : 202).send({
        kind,
        id,
        stop: stop ?? { verdict: 'pending', detail: 'the stop is still being verified; inspect the id for its result' },
      });
    },
  );

  const inspect = async (request: { params: { id: string }; actor: Actor }) =>
    inspectWork(deps, request.params.id, companyActor(request.actor));
  api.get(
    '/api/work/:id/inspect',
    {
      schema: {
        summary: 'Inspect any background id: the ownership graph, verdict and action',
        params: idParams('id'),
        response: answers({ 200: WorkInspection }),
      },
    },
    inspect,
  );
  api.get(
    '/api/runs/:id/inspect',
    {
      schema: {
        summary: 'Inspect a run (as /api/work/:id/inspect)',
        params: idParams('id'),
        response: answers({ 200: WorkInspection }),
      },
    },
    inspect,
  );

  api.post(
    '/api/runs/:id/jobs',
    {
      schema: {
        summary: 'Start a shell job or monitor owned by the run',
        params: idParams('id'),
        body: jobSchema,
        response: answers({ 201: BackgroundJob }),
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const body = request.body;
      const owner = await permittedRun(deps, request.actor, id, 'run.start_job');
      return createOnce(deps, request, reply, owner.companyId, async (remember) => {
        const job = await createJob(deps, id, body, request.actor, (tx, created) =>
          remember(tx, { status: 201, body: presentJob(created) }),
        );
        return { status: 201, body: presentJob(job) };
      });
    },
  );

  api.post(
    '/api/runs/:id/evidence',
    {
      schema: {
        summary: 'Record gate evidence for a run',
        params: idParams('id'),
        body: evidenceSchema,
        response: answers({ 201: GateEvidence }),
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const body = request.body;
      await permittedRun(deps, request.actor, id, 'run.record_evidence');
      return reply.status(201).send(await recordEvidence(deps, id, body, request.actor));
    },
  );

  api.post(
    '/api/runs/:id/ack',
    {
      schema: {
        summary: "Acknowledge a failed run's finding",
        params: idParams('id'),
        response: answers({ 200: AcknowledgedRun }),
      },
    },
    async (request) => {
      const { id } = request.params;
      const actor = companyActor(request.actor);
      await permittedRun(deps, actor, id, 'run.ack');
      const run = await acknowledgeFailure(deps, id, actor);
      return { id: run.id, status: run.status, failureState: run.failureState };
    },
  );

  api.post(
    '/api/runs/:id/silence',
    {
      schema: {
        summary: 'Decide about a silent run: snooze, continue or dismiss',
        params: idParams('id'),
        body: silenceSchema,
        response: answers({ 200: SilenceDecision }),
      },
    },
    async (request) => {
      const { id } = request.params;
      const body = request.body;
      const actor = companyActor(request.actor);
      await permittedRun(deps, actor, id, 'run.silence');
      const run = await decideSilence(deps, id, body.decision, body.minutes, actor);
      return { id: run.id, silentState: run.silentState, decision: run.silentDecision, until: run.silentDecisionUntil };
    },
  );
}
