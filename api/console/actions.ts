/** The console's actions: each calls one API operation and returns the fragment shown in the page's result area. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { WATCHDOG_MODES } from '../../domain/watchdog';
import type { ZodTypeProvider } from '../openapi';
import { idParams } from '../validation';
import { CONSOLE_PREFIX, form, type ConsoleKit } from './handler-kit';

export function registerConsoleActions(app: FastifyInstance, kit: ConsoleKit) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { call, result } = kit;

  api.post(
    `${CONSOLE_PREFIX}/issues/:id/pause`,
    { schema: { params: idParams('id'), body: form({ reason: z.string().max(2000).optional() }) } },
    async (request, reply) => {
      const reason = request.body.reason?.trim();
      const answer = await call(request, 'POST', `/api/issues/${request.params.id}/tree-holds`, {
        mode: 'pause',
        ...(reason ? { reason } : {}),
      });
      return result(reply, answer, 'Paused', (hold) => ({
        holdId: hold.id,
        status: hold.status,
        members: hold.members.length,
        interruptedRuns: hold.members.filter((m: { interruptedRunId: string | null }) => m.interruptedRunId).length,
      }));
    },
  );
  api.post(
    `${CONSOLE_PREFIX}/holds/:id/release`,
    { schema: { params: idParams('id'), body: form({ wakeAgents: z.enum(['true', 'false']).default('false') }) } },
    async (request, reply) => {
      const hold = await call(request, 'GET', `/api/tree-holds/${request.params.id}`);
      if (hold.status !== 200) return result(reply, hold, 'Release');
      const answer = await call(
        request,
        'POST',
        `/api/issues/${hold.body.rootIssueId}/tree-holds/${request.params.id}/release`,
        { wakeAgents: request.body.wakeAgents === 'true' },
      );
      return result(reply, answer, 'Released', (r) => ({
        resumed: r.resumed,
        skipped: r.skipped,
        wakeFailures: r.wakeFailures,
      }));
    },
  );
  api.post(`${CONSOLE_PREFIX}/work/:id/stop`, { schema: { params: idParams('id') } }, async (request, reply) => {
    const answer = await call(request, 'POST', `/api/work/${request.params.id}/stop`);
    return result(
      reply,
      answer,
      answer.status === 202 ? 'Stop requested (still being verified)' : 'Stopped (verified)',
      (r) => r.stop,
    );
  });
  api.post(`${CONSOLE_PREFIX}/runs/:id/ack`, { schema: { params: idParams('id') } }, async (request, reply) =>
    result(reply, await call(request, 'POST', `/api/runs/${request.params.id}/ack`), 'Acknowledged'),
  );
  api.post(
    `${CONSOLE_PREFIX}/runs/:id/silence`,
    {
      schema: {
        params: idParams('id'),
        body: form({
          decision: z.enum(['snooze', 'continue', 'dismiss']),
          minutes: z.coerce.number().int().optional(),
        }),
      },
    },
    async (request, reply) => {
      const { decision, minutes } = request.body;
      return result(
        reply,
        await call(request, 'POST', `/api/runs/${request.params.id}/silence`, {
          decision,
          ...(minutes === undefined ? {} : { minutes }),
        }),
        `Silence: ${decision}`,
      );
    },
  );
  api.post(
    `${CONSOLE_PREFIX}/blockers/:id/resolve`,
    {
      schema: {
        params: idParams('id'),
        body: form({
          resolution: z.enum(['no_external_effects', 'effects_reviewed']),
          note: z.string().max(10_000).optional(),
        }),
      },
    },
    async (request, reply) => {
      const { resolution, note } = request.body;
      return result(
        reply,
        await call(request, 'POST', `/api/execution-blockers/${request.params.id}/resolve`, {
          resolution,
          ...(note ? { note } : {}),
        }),
        'Blocker resolved',
      );
    },
  );
  api.post(
    `${CONSOLE_PREFIX}/issues/:id/watchdog`,
    {
      schema: {
        params: idParams('id'),
        body: form({
          agentId: z.string(),
          instructions: z.string().max(20_000).optional(),
          mode: z.enum(WATCHDOG_MODES).optional(),
          repeatLimit: z.string().max(10).optional(),
        }),
      },
    },
    async (request, reply) => {
      const { agentId, instructions, mode, repeatLimit } = request.body;
      // a blank limit keeps the watchdog's; anything else is the API's to refuse (a 400 naming repeatLimit)
      const limit = repeatLimit?.trim() ? { repeatLimit: Number(repeatLimit) } : {};
      const answer = await call(request, 'PUT', `/api/issues/${request.params.id}/watchdog`, {
        agentId,
        instructions: instructions?.trim() ? instructions : null,
        ...(mode ? { mode } : {}),
        ...limit,
      });
      return result(reply, answer, answer.status === 201 ? 'Watchdog set' : 'Watchdog updated', (w) => ({
        id: w.id,
        revision: w.revision,
        status: w.status,
      }));
    },
  );
  api.post(
    `${CONSOLE_PREFIX}/issues/:id/watchdog/remove`,
    { schema: { params: idParams('id') } },
    async (request, reply) =>
      result(
        reply,
        await call(request, 'DELETE', `/api/issues/${request.params.id}/watchdog`),
        'Watchdog removed',
        (w) => ({ id: w.id, status: w.status }),
      ),
  );
}
