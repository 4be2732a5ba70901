/** The console's read pages: company overview, issue tree (and its lazily fetched levels), run, hold. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../runtime/deps';
import { issueTitles } from '../../issues/issues';
import type { TreeNode } from '../../issues/tree-view';
import type { ZodTypeProvider } from '../openapi';
import { idParams } from '../validation';
import { layoutProcessTree } from './graph';
import { CONSOLE_PREFIX, fragmentQuery, pageQuery, type ConsoleKit } from './handler-kit';

/** The newest entries of the feed on the tree page (refreshed with it), and a page of the feed's own page. */
const ACTIVITY_ON_TREE_PAGE = 20;
const ACTIVITY_PAGE = 100;

export function registerConsolePages(app: FastifyInstance, deps: Deps, kit: ConsoleKit) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { session, call, page, refused } = kit;
  /** One level of a subtree, a page of children at a time: what lazy expansion and its badge refresh both read. */
  const oneLevel = (request: FastifyRequest & { params: { id: string }; query: z.infer<typeof pageQuery> }) =>
    call<TreeNode>(
      request,
      'GET',
      `/api/issues/${request.params.id}/tree?depth=1&offset=${request.query.offset}&limit=${request.query.limit}`,
    );

  api.get(CONSOLE_PREFIX, { schema: { querystring: fragmentQuery } }, async (request, reply) => {
    const overview = await call(request, 'GET', `/api/companies/${session(request).companyId}/overview`);
    if (overview.status !== 200) return refused(reply, request, overview);
    return page(reply, request, request.query.fragment ? 'company-live' : 'company', {
      title: overview.body.company.name,
      data: overview.body,
    });
  });

  api.get(
    `${CONSOLE_PREFIX}/issues/:id`,
    { schema: { params: idParams('id'), querystring: fragmentQuery } },
    async (request, reply) => {
      const { id } = request.params;
      const [tree, holds, watchdog, agents, activity] = await Promise.all([
        call<TreeNode>(request, 'GET', `/api/issues/${id}/tree?depth=1`),
        call(request, 'GET', `/api/issues/${id}/tree-holds`),
        call(request, 'GET', `/api/issues/${id}/watchdog`),
        call(request, 'GET', `/api/companies/${session(request).companyId}/agents`),
        call(request, 'GET', `/api/issues/${id}/activity?limit=${ACTIVITY_ON_TREE_PAGE}`),
      ]);
      for (const answer of [tree, holds, watchdog, agents, activity])
        if (answer.status !== 200) return refused(reply, request, answer);
      const data = {
        title: tree.body.title,
        tree: tree.body,
        holds: [...holds.body.items].reverse(),
        watchdog: watchdog.body,
        agents: agents.body.items,
        activity: activity.body,
      };
      return page(reply, request, request.query.fragment ? 'tree-live' : 'tree', data);
    },
  );
  /** The issue's audit feed a page at a time, older pages by the cursor the newer one handed out. */
  api.get(
    `${CONSOLE_PREFIX}/issues/:id/activity`,
    { schema: { params: idParams('id'), querystring: z.object({ cursor: z.string().optional() }) } },
    async (request, reply) => {
      const { id } = request.params;
      const cursor = request.query.cursor ? `&cursor=${encodeURIComponent(request.query.cursor)}` : '';
      const [issue, activity] = await Promise.all([
        call(request, 'GET', `/api/issues/${id}`),
        call(request, 'GET', `/api/issues/${id}/activity?limit=${ACTIVITY_PAGE}${cursor}`),
      ]);
      for (const answer of [issue, activity]) if (answer.status !== 200) return refused(reply, request, answer);
      const title = `Activity: ${issue.body.title}`;
      const data = { title, issueId: id, issueTitle: issue.body.title, page: activity.body, older: Boolean(cursor) };
      return page(reply, request, 'activity', data);
    },
  );
  /** One level of the tree, fetched when a node is first expanded (a large subtree is never rendered whole). */
  api.get(
    `${CONSOLE_PREFIX}/issues/:id/children`,
    { schema: { params: idParams('id'), querystring: pageQuery } },
    async (request, reply) => {
      const tree = await oneLevel(request);
      if (tree.status !== 200) return refused(reply, request, tree);
      return page(reply, request, 'children', {
        parentId: tree.body.id,
        nodes: tree.body.children ?? [],
        more: tree.body.moreChildren,
        offset: request.query.offset,
      });
    },
  );
  /** Fresh badges for one expanded level, swapped into place out of band (expanded children stay open). */
  api.get(
    `${CONSOLE_PREFIX}/issues/:id/badges`,
    { schema: { params: idParams('id'), querystring: pageQuery } },
    async (request, reply) => {
      const tree = await oneLevel(request);
      if (tree.status !== 200) return refused(reply, request, tree);
      return page(reply, request, 'badge-updates', { nodes: tree.body.children ?? [] });
    },
  );

  api.get(
    `${CONSOLE_PREFIX}/runs/:id`,
    { schema: { params: idParams('id'), querystring: fragmentQuery } },
    async (request, reply) => {
      const { id } = request.params;
      const view = await call(request, 'GET', `/api/work/${id}/inspect`);
      if (view.status !== 200) return refused(reply, request, view);
      if (view.body.kind !== 'agent_run')
        return refused(reply, request, {
          status: 404,
          body: { error: { message: `${id} is a ${view.body.kind}, not an agent run` } },
        });
      const issue = await call(request, 'GET', `/api/issues/${view.body.run.issueId}`);
      const graph = view.body.processTree.visible
        ? await layoutProcessTree(`run ${id.slice(0, 8)}`, view.body.processTree.processes)
        : null;
      const data = {
        title: `Run ${id.slice(0, 8)}`,
        runId: id,
        view: view.body,
        graph,
        issueTitle: issue.body?.title ?? view.body.run.issueId,
      };
      return page(reply, request, request.query.fragment ? 'run-live' : 'run', data);
    },
  );

  api.get(
    `${CONSOLE_PREFIX}/holds/:id`,
    { schema: { params: idParams('id'), querystring: fragmentQuery } },
    async (request, reply) => {
      const hold = await call(request, 'GET', `/api/tree-holds/${request.params.id}`);
      if (hold.status !== 200) return refused(reply, request, hold);
      const ids: string[] = hold.body.members.map((m: { issueId: string }) => m.issueId).concat(hold.body.rootIssueId);
      const titles = await issueTitles(deps, session(request).companyId, ids);
      const members = hold.body.members.map((m: { issueId: string; interruptedRunId: string | null }) => ({
        ...m,
        title: titles.get(m.issueId) ?? m.issueId,
        resume: resumeState(hold.body, m),
      }));
      const data = {
        title: `Hold ${request.params.id.slice(0, 8)}`,
        hold: hold.body,
        members,
        rootTitle: titles.get(hold.body.rootIssueId) ?? hold.body.rootIssueId,
        stopSummary: stopSummary(hold.body),
        survivors: hold.body.survivors.map((s: { issueId: string }) => ({ ...s, title: titles.get(s.issueId) })),
      };
      return page(reply, request, request.query.fragment ? 'hold-live' : 'hold', data);
    },
  );
}

interface HoldBody {
  status: string;
  releaseResult: {
    resumed?: { issueId: string; runId: string }[];
    skipped?: { issueId: string; reason: string }[];
    wakeFailures?: { issueId: string; message: string }[];
  } | null;
}

/** Whether a member's resume is owed, claimed, skipped (and why), waiting for the release, or not needed. */
function resumeState(
  hold: HoldBody,
  member: { issueId: string; interruptedRunId: string | null },
): { state: string; runId?: string; reason?: string } {
  if (!member.interruptedRunId) return { state: 'none' };
  if (hold.status === 'active') return { state: 'waiting' };
  const report = hold.releaseResult ?? {};
  const resumed = report.resumed?.find((r) => r.issueId === member.issueId);
  if (resumed) return { state: 'claimed', runId: resumed.runId };
  const skipped = report.skipped?.find((s) => s.issueId === member.issueId);
  if (skipped) return { state: 'skipped', reason: skipped.reason };
  const failed = report.wakeFailures?.find((f) => f.issueId === member.issueId);
  return { state: 'owed', ...(failed ? { reason: failed.message } : {}) };
}

/** The hold's stop state in words: a pause is in force only once every stop it made is verified. */
function stopSummary(hold: { stopState: string; survivors: { processes: unknown[]; writersAlive: number }[] }) {
  const processes = hold.survivors.reduce((n, s) => n + s.processes.length, 0);
  const writers = hold.survivors.reduce((n, s) => n + s.writersAlive, 0);
  const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  switch (hold.stopState) {
    case 'verified':
      return 'verified: every stopped run is gone';
    case 'partial': {
      const left = `${count(processes, 'process', 'processes')} and ${count(writers, 'writer')}`;
      return `not verified: ${count(hold.survivors.length, 'run')} left ${left}`;
    }
    case 'pending':
      return 'not verified yet: stops are unwinding or wait for their host';
    default:
      return 'not verifiable: a host was declared lost';
  }
}
