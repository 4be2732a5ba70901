/** Watchdog configuration and issue interactions (the waiting paths a watchdog must see). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Actor } from '../../domain/actor';
import { AppError } from '../../domain/errors';
import { uuidSchema } from '../../domain/ids';
import { jsonRecord, safeString } from '../../domain/safe-input';
import { ESCALATION_INTERACTION_KIND } from '../../domain/watchdog-recheck';
import { issueInCompany, permit } from '../../access/authority';
import type { Deps } from '../../runtime/deps';
import { activeWatchdogOf, putWatchdog, removeWatchdog } from '../../watchdogs/configuration';
import { stopRevokedReviewRuns } from '../../watchdogs/review-runs';
import { openInteraction, resolveInteraction } from '../../interactions/interactions';
import type { ZodTypeProvider } from '../openapi';
import { answers, Interaction, Watchdog } from '../schemas';
import { companyActor, idParams, watchdogBodySchema } from '../validation';

const presentWatchdog = (w: {
  id: string;
  companyId: string;
  issueId: string;
  agentId: string;
  instructions: string | null;
  mode: string;
  status: string;
  revision: number;
  reviewIssueId: string | null;
  lastObservedFingerprint: string | null;
  lastReviewedFingerprint: string | null;
  lastEvaluation: unknown;
  triggerCount: number;
  lastTriggeredAt: Date | null;
  repeatLimit: number;
  acceptedUntil: Date | null;
  recheckCount: number;
  escalatedFingerprint: string | null;
  createdAt: Date;
  updatedAt: Date;
}) => ({
  id: w.id,
  companyId: w.companyId,
  issueId: w.issueId,
  agentId: w.agentId,
  instructions: w.instructions,
  mode: w.mode,
  status: w.status,
  revision: w.revision,
  reviewIssueId: w.reviewIssueId,
  lastObservedFingerprint: w.lastObservedFingerprint,
  lastReviewedFingerprint: w.lastReviewedFingerprint,
  lastEvaluation: w.lastEvaluation,
  triggerCount: w.triggerCount,
  lastTriggeredAt: w.lastTriggeredAt,
  repeatLimit: w.repeatLimit,
  acceptedUntil: w.acceptedUntil,
  recheckCount: w.recheckCount,
  escalatedFingerprint: w.escalatedFingerprint,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

const interactionBody = z
  .object({
    kind: safeString()
      .trim()
      .min(1)
      .max(100)
      .refine((kind) => kind !== ESCALATION_INTERACTION_KIND, {
        error: `"${ESCALATION_INTERACTION_KIND}" is the kind only a watchdog's escalation opens`,
      }),
    audience: z.enum(['anyone', 'human_only', 'not_creator']).default('anyone'),
    addresseeAgentId: uuidSchema.nullable().optional(),
  })
  .strict();
const resolveInteractionBody = z
  .object({ resolution: jsonRecord().optional(), status: z.enum(['resolved', 'cancelled']).default('resolved') })
  .strict();

/** The tokens of revoked review runs are refused from the commit on; a failed stop is logged, not the request's. */
const stopReviewRunsAfter = (deps: Deps, watchdogId: string, actor: Actor) =>
  stopRevokedReviewRuns(deps, watchdogId, actor).catch((error: unknown) =>
    deps.log.warn({ err: error, watchdogId }, 'revoked review runs could not be stopped; their tokens are refused'),
  );

export function registerWatchdogRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/issues/:issueId/watchdog',
    {
      schema: {
        summary: "Read an issue's active watchdog (null when none)",
        params: idParams('issueId'),
        response: answers({ 200: Watchdog.nullable() }),
      },
    },
    async (request) => {
      const { issueId } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'watchdog.manage', { companyId: actor.companyId });
      const watchdog = await activeWatchdogOf(deps, await issueInCompany(deps.db, actor, issueId));
      return watchdog ? presentWatchdog(watchdog) : null;
    },
  );

  api.put(
    '/api/issues/:issueId/watchdog',
    {
      schema: {
        summary: "Set an issue's watchdog (201 created, 200 updated)",
        params: idParams('issueId'),
        body: watchdogBodySchema,
        response: answers({ 200: Watchdog, 201: Watchdog }),
      },
    },
    async (request, reply) => {
      const { issueId } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'watchdog.manage', { companyId: actor.companyId });
      const body = request.body;
      const issue = await issueInCompany(deps.db, actor, issueId);
      const { watchdog, created } = await putWatchdog(deps, issue, body, actor);
      if (!created) await stopReviewRunsAfter(deps, watchdog.id, actor);
      return reply.status(created ? 201 : 200).send(presentWatchdog(watchdog));
    },
  );

  api.delete(
    '/api/issues/:issueId/watchdog',
    {
      schema: {
        summary: "Remove an issue's watchdog",
        params: idParams('issueId'),
        response: answers({ 200: Watchdog }),
      },
    },
    async (request, reply) => {
      const { issueId } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'watchdog.manage', { companyId: actor.companyId });
      const issue = await issueInCompany(deps.db, actor, issueId);
      const removed = await removeWatchdog(deps, issue, actor);
      if (!removed) throw new AppError('not_found', 'this issue has no active watchdog');
      await stopReviewRunsAfter(deps, removed.id, actor);
      await deps.orchestrator
        .watchdogRemoved(issueId, removed.id)
        .catch((error: unknown) =>
          deps.log.warn({ err: error }, 'watchdog removal signal failed; its next evaluation ends it'),
        );
      return reply.status(200).send(presentWatchdog(removed));
    },
  );

  api.post(
    '/api/issues/:id/interactions',
    {
      schema: {
        summary: 'Open an interaction on an issue',
        params: idParams('id'),
        body: interactionBody,
        response: answers({ 201: Interaction }),
      },
    },
    async (request, reply) => {
      const interaction = await openInteraction(deps, companyActor(request.actor), request.params.id, request.body);
      return reply.status(201).send(interaction);
    },
  );

  api.post(
    '/api/interactions/:id/resolve',
    {
      schema: {
        summary: 'Resolve or cancel an interaction',
        params: idParams('id'),
        body: resolveInteractionBody,
        response: answers({ 200: Interaction }),
      },
    },
    async (request) => {
      return resolveInteraction(deps, companyActor(request.actor), request.params.id, request.body);
    },
  );
}
