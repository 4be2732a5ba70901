/** An issue's one-shot monitor: `GET|PUT|DELETE /api/issues/:issueId/monitor` (monitors/monitors.ts). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../runtime/deps';
import { clearIssueMonitor, issueMonitorOf, setIssueMonitor } from '../../monitors/monitors';
import type { ZodTypeProvider } from '../openapi';
import { answers } from '../schemas';
import { IssueMonitor } from '../schemas-monitors';
import { companyActor, idParams, monitorBodySchema } from '../validation';

export function registerMonitorRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/issues/:issueId/monitor',
    {
      schema: {
        summary: "Read an issue's monitor: pending, or the last one that ended (null when it never had one)",
        params: idParams('issueId'),
        response: answers({ 200: IssueMonitor.nullable() }),
      },
    },
    async (request) => issueMonitorOf(deps, companyActor(request.actor), request.params.issueId),
  );

  api.put(
    '/api/issues/:issueId/monitor',
    {
      schema: {
        summary:
          "Set an issue's one-shot monitor: its assignee is woken once at `at` (reason `issue_monitor`) " +
          '(201 set, 200 a pending one refreshed)',
        params: idParams('issueId'),
        body: monitorBodySchema,
        response: answers({ 200: IssueMonitor, 201: IssueMonitor }),
      },
    },
    async (request, reply) => {
      const { monitor, refreshed } = await setIssueMonitor(
        deps,
        companyActor(request.actor),
        request.params.issueId,
        request.body,
      );
      return reply.status(refreshed ? 200 : 201).send(monitor);
    },
  );

  api.delete(
    '/api/issues/:issueId/monitor',
    {
      schema: {
        summary: "Clear an issue's pending monitor",
        params: idParams('issueId'),
        response: answers({ 200: IssueMonitor }),
      },
    },
    async (request) => clearIssueMonitor(deps, companyActor(request.actor), request.params.issueId),
  );
}
