/** Run supervision: the unified stop and inspection of any background id, owner-bound jobs, evidence, acknowledgement, silence decisions. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Actor } from '../../domain/actor';
import type { Action } from '../../domain/authorization';
import { AppError } from '../../domain/errors';
import { jsonRecord, safeString } from '../../domain/safe-input';
import { permitOnRun } from '../../services/authority';
import type { Deps } from '../../services/deps';
import { inspectWork } from '../../services/inspect';
import { createJob, resolveWork, stopWork } from '../../services/jobs';
import { acknowledgeFailure, decideSilence, recordEvidence } from '../../services/supervision';
import { companyActor, ids, parse } from '../validation';

/** An action on an agent run, as domain/authorization.ts allows it. */
async function permittedRun(deps: Deps, actor: Actor, runId: string, action: Action) {
  const work = await resolveWork(deps, runId, companyActor(actor));
  if (work.kind !== 'agent_run') throw new AppError('not_found', `${runId} is a ${work.kind.replace('_', ' ')}, not an agent run`);
  permitOnRun(actor, action, work.run);
  return work.run;
}

const jobSchema = z
  .object({ kind: z.enum(['shell_job', 'monitor']), command: safeString().trim().min(1).max(4096), args: z.array(safeString().max(4096)).max(256).default([]) })
  .strict();
const evidenceSchema = z.object({ check: safeString().trim().min(1).max(200), passed: z.boolean(), details: jsonRecord().optional() }).strict();
const silenceSchema = z.object({ decision: z.enum(['snooze', 'continue', 'dismiss']), minutes: z.number().int().min(1).max(10_080).optional() }).strict();

export function registerSupervisionRoutes(app: FastifyInstance, deps: Deps) {
  /** Stops an agent run, shell job or monitor by id, and reports the verified result when it is in. */
  app.post('/api/work/:id/stop', async (request, reply) => {
    const { id } = ids(request.params, 'id');
    const stopped = await stopWork(deps, id, companyActor(request.actor));
    const result = await verifiedResult(deps, stopped.kind === 'agent_run' ? 'run' : 'job', id);
    return reply.status(result ? 200 : 202).send({ kind: stopped.kind, id, stop: result ?? { verdict: 'pending', detail: 'the stop is still being verified; inspect the id for its result' } });
  });

  const inspect = async (request: { params: unknown; actor: Actor }) => {
    const { id } = ids(request.params, 'id');
    return inspectWork(deps, id, companyActor(request.actor));
  };
  app.get('/api/work/:id/inspect', inspect);
  app.get('/api/runs/:id/inspect', inspect);

  app.post('/api/runs/:id/jobs', async (request, reply) => {
    const { id } = ids(request.params, 'id');
    const body = parse(jobSchema, request.body);
    await permittedRun(deps, request.actor, id, 'run.start_job');
    const { ownerToken: _hidden, ...job } = await createJob(deps, id, body, request.actor);
    return reply.status(201).send(job);
  });

  app.post('/api/runs/:id/evidence', async (request, reply) => {
    const { id } = ids(request.params, 'id');
    const body = parse(evidenceSchema, request.body);
    await permittedRun(deps, request.actor, id, 'run.record_evidence');
    return reply.status(201).send(await recordEvidence(deps, id, body, request.actor));
  });

  app.post('/api/runs/:id/ack', async (request) => {
    const { id } = ids(request.params, 'id');
    const actor = companyActor(request.actor);
    await permittedRun(deps, actor, id, 'run.ack');
    const run = await acknowledgeFailure(deps, id, actor);
    return { id: run.id, status: run.status, failureState: run.failureState };
  });

  app.post('/api/runs/:id/silence', async (request) => {
    const { id } = ids(request.params, 'id');
    const body = parse(silenceSchema, request.body);
    const actor = companyActor(request.actor);
    await permittedRun(deps, actor, id, 'run.silence');
    const run = await decideSilence(deps, id, body.decision, body.minutes, actor);
    return { id: run.id, silentState: run.silentState, decision: run.silentDecision, until: run.silentDecisionUntil };
  });
}

/** Waits (bounded by the stop grace plus the SIGKILL settle) for the workflow's verified stop. */
async function verifiedResult(deps: Deps, table: 'run' | 'job', id: string): Promise<unknown> {
  const deadline = Date.now() + deps.config.TREEWARDEN_STOP_GRACE_MS + 10_000;
  for (;;) {
    const row = table === 'run' ? await deps.db.run.findUnique({ where: { id }, select: { stopResult: true, status: true } }) : await deps.db.job.findUnique({ where: { id }, select: { stopResult: true, status: true } });
    if (row?.stopResult) return row.stopResult;
    // a queued run or an exited job had nothing to stop
    if (row && (row.status === 'cancelled' || row.status === 'exited')) return { verdict: 'terminal-clean', attempts: [], detail: 'nothing was running' };
    if (Date.now() > deadline) return null;
    await new Promise((r) => setTimeout(r, 100));
  }
}
