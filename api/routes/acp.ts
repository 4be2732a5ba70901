/**
 * The routes an `acp` run's supervisor calls with its run's token (issue 46): the session ledger's claim, its
 * activity report, and its issue's queued messages (a peek while a turn is under way, a claim when it prompts them).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { acpActivitySchema } from '../../domain/acp-activity';
import { ACP_SESSION_ORIGINS } from '../../domain/acp-session';
import { uuidSchema } from '../../domain/ids';
import { safeString } from '../../domain/safe-input';
import { recordAcpActivity } from '../../runs/acp-activity';
import { claimAcpMessages, queuedAcpMessages, returnAcpMessages } from '../../runs/acp-messages';
import { claimAcpSession } from '../../runs/acp-sessions';
import type { Deps } from '../../runtime/deps';
import type { ZodTypeProvider } from '../openapi';
import { answers } from '../schemas';
import {
  AcpActivityRecorded,
  AcpMessagesClaimed,
  AcpMessagesQueued,
  AcpMessagesReturned,
  AcpSessionClaimed,
} from '../schemas-supervision';
import { idParams } from '../validation';
import { permittedRun } from './supervision';

const acpSessionSchema = z
  .object({
    sessionId: safeString().trim().min(1).max(512),
    cwd: safeString().min(1).max(4096),
    command: z.array(safeString().max(4096)).min(1).max(256),
    host: safeString().min(1).max(255),
    origin: z.enum(ACP_SESSION_ORIGINS),
  })
  .strict();

const returnSchema = z
  .object({ ids: z.array(uuidSchema).min(1).max(1000).meta({ description: 'the claimed messages never prompted' }) })
  .strict();

const claimSchema = z
  .object({
    last: z
      .boolean()
      .optional()
      .meta({
        description:
          'the supervisor would end the run if nothing is queued: then, in the same transaction, the run stops ' +
          "taking messages (a comment from then on is not a message to it), so none is left behind by the run's end",
      }),
  })
  .strict()
  .optional();

export function registerAcpRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  api.put(
    '/api/runs/:id/acp-session',
    {
      schema: {
        summary:
          "An acp run's supervisor claims its ACP session before the first prompt (409 while another live run uses it)",
        params: idParams('id'),
        body: acpSessionSchema,
        response: answers({ 200: AcpSessionClaimed }),
      },
    },
    async (request) => {
      const { id } = request.params;
      await permittedRun(deps, request.actor, id, 'run.claim_session');
      return claimAcpSession(deps, id, request.body);
    },
  );

  api.put(
    '/api/runs/:id/acp-activity',
    {
      schema: {
        summary:
          "An acp run's supervisor reports its last tool calls, message, permission decisions and usage (bounded; " +
          'shown on the run, the usage in the postmortem)',
        params: idParams('id'),
        body: acpActivitySchema,
        response: answers({ 200: AcpActivityRecorded }),
      },
    },
    async (request) => {
      const { id } = request.params;
      await permittedRun(deps, request.actor, id, 'run.claim_session');
      return recordAcpActivity(deps, id, request.body);
    },
  );

  api.get(
    '/api/runs/:id/acp-messages',
    {
      // polled during a turn by a supervisor whose agent's messages interrupt: not a sign of the agent's life
      config: { signOfLife: false },
      schema: {
        summary: "How many of an acp run's issue's messages are queued (its supervisor's poll during a turn)",
        params: idParams('id'),
        response: answers({ 200: AcpMessagesQueued }),
      },
    },
    async (request) => {
      const { id } = request.params;
      await permittedRun(deps, request.actor, id, 'run.claim_session');
      return { queued: await queuedAcpMessages(deps, id) };
    },
  );

  api.post(
    '/api/runs/:id/acp-messages/claim',
    {
      schema: {
        summary: "An acp run's supervisor takes its issue's queued messages, oldest first, each once",
        params: idParams('id'),
        body: claimSchema,
        response: answers({ 200: AcpMessagesClaimed }),
      },
    },
    async (request) => {
      const { id } = request.params;
      await permittedRun(deps, request.actor, id, 'run.claim_session');
      return { items: await claimAcpMessages(deps, id, request.body?.last === true) };
    },
  );

  api.post(
    '/api/runs/:id/acp-messages/return',
    {
      schema: {
        summary: "An acp run's supervisor returns messages it claimed and never prompted (a stop came first)",
        params: idParams('id'),
        body: returnSchema,
        response: answers({ 200: AcpMessagesReturned }),
      },
    },
    async (request) => {
      const { id } = request.params;
      await permittedRun(deps, request.actor, id, 'run.claim_session');
      return { returned: await returnAcpMessages(deps, id, request.body.ids) };
    },
  );
}
