/** The postmortem of an issue tree: productive time, recovery time and the failure counts of seed 003. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../runtime/deps';
import { issueInCompany } from '../../access/authority';
import { issueTreePostmortem } from '../../postmortem/postmortem';
import type { ZodTypeProvider } from '../openapi';
import { answers } from '../schemas';
import { Postmortem } from '../schemas-postmortem';
import { companyActor, idParams } from '../validation';

export function registerPostmortemRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  // a read of the company's own records: whoever may read the issue may read its postmortem
  api.get(
    '/api/issues/:id/postmortem',
    {
      schema: {
        summary:
          "An issue tree's postmortem: productive time, watchdog recovery time and failure counts, " +
          'each with what it counts',
        params: idParams('id'),
        response: answers({ 200: Postmortem }),
      },
    },
    async (request) => {
      const { id } = request.params;
      await issueInCompany(deps.db, companyActor(request.actor), id);
      return { issueId: id, ...(await issueTreePostmortem(deps.db, id)) };
    },
  );
}
