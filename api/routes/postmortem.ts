/** The postmortem of an issue tree: productive time, recovery time and the failure counts of seed 003. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../services/deps';
import { issueInCompany } from '../../services/issues';
import { issueTreePostmortem } from '../../services/postmortem';
import { companyActor, ids } from '../validation';

export function registerPostmortemRoutes(app: FastifyInstance, deps: Deps) {
  // a read of the company's own records: whoever may read the issue may read its postmortem
  app.get('/api/issues/:id/postmortem', async (request) => {
    const { id } = ids(request.params, 'id');
    await issueInCompany(deps.db, companyActor(request.actor), id);
    return { issueId: id, ...(await issueTreePostmortem(deps.db, id)) };
  });
}
