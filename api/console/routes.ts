/**
 * The operator console at /ui: server-rendered pages (Eta) made live by htmx polling, over the same
 * JSON routes the main app calls. Each page and action calls the API in-process (fastify inject) with
 * the session's own board token, so the console can show and do nothing the API would not allow.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../domain/errors';
import type { Deps } from '../../runtime/deps';
import { issueTitles } from '../../issues/issues';
import type { TreeNode } from '../../issues/tree-view';
import type { ZodTypeProvider } from '../openapi';
import { idParams } from '../validation';
import { layoutProcessTree } from './graph';
import { helpers, render } from './render';
import {
  assertCsrf,
  assertSameOrigin,
  sessionOf,
  setSessionCookie,
  signIn,
  signOut,
  type ConsoleSession,
} from './session';

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession: ConsoleSession | null;
  }
}

export const CONSOLE_PREFIX = '/ui';
const SIGN_IN = `${CONSOLE_PREFIX}/sign-in`;
const STATIC = `${CONSOLE_PREFIX}/static/`;
const FAVICON = '/favicon.ico';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface ApiAnswer<T = any> {
  status: number;
  body: T;
}

const htmx = readFileSync(require.resolve('htmx.org/dist/htmx.min.js'));
const css = readFileSync(join(__dirname, 'static', 'console.css'));

const fragmentQuery = z.object({ fragment: z.string().optional() });
const pageQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(200),
});
const form = <T extends z.ZodRawShape>(shape: T) => z.object({ _csrf: z.string().optional(), ...shape });

/** Registers the console; `root` is the whole API, which pages and actions call in-process. */
export function consolePlugin(root: FastifyInstance, deps: Deps) {
  const h = helpers(deps.config);

  return async (app: FastifyInstance) => {
    // pages are not API operations: left out of the OpenAPI document, and they check their own session
    app.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), public: true };
      route.schema = { ...(route.schema ?? {}), hide: true };
    });
    await app.register(helmet, {
      // same-origin: the console's own form posts carry their Origin (no-referrer would send "null")
      referrerPolicy: { policy: 'same-origin' },
      contentSecurityPolicy: {
        // served over plain http on a workstation too: no upgrade of the page's own requests
        directives: { 'upgrade-insecure-requests': null, 'script-src': ["'self'"], 'img-src': ["'self'", 'data:'] },
      },
    });
    await app.register(cookie);
    await app.register(formbody);
    app.decorateRequest('consoleSession', null);

    app.addHook('onRequest', async (request, reply) => {
      const url = request.routeOptions.url ?? '';
      if (url === SIGN_IN || url === FAVICON || url.startsWith(STATIC)) return;
      request.consoleSession = await sessionOf(deps, request);
      if (request.consoleSession) return;
      if (request.method === 'GET' && !request.headers['hx-request']) return reply.redirect(SIGN_IN, 303);
      throw new AppError('unauthorized', 'no console session: sign in at /ui/sign-in');
    });
    app.addHook('preHandler', async (request) => {
      if (request.method !== 'GET' && request.consoleSession) assertCsrf(request, request.consoleSession);
    });

    const api = app.withTypeProvider<ZodTypeProvider>();
    const session = (request: FastifyRequest) => request.consoleSession as ConsoleSession;
    const call = async <T = any>(
      request: FastifyRequest,
      method: Method,
      url: string,
      body?: unknown,
    ): Promise<ApiAnswer<T>> => {
      const answer = await root.inject({
        method,
        url,
        headers: { authorization: `Bearer ${session(request).secret}` },
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: answer.statusCode, body: answer.body ? (JSON.parse(answer.body) as T) : (null as T) };
    };
    const page = (
      reply: FastifyReply,
      request: FastifyRequest,
      template: string,
      data: Record<string, unknown>,
      status = 200,
    ) =>
      reply
        .status(status)
        .type('text/html; charset=utf-8')
        .send(render(template, { ...data, h, session: request.consoleSession }));
    /** An API refusal as the page a person sees (a foreign or unknown id is "not found", as in the API). */
    const refused = (reply: FastifyReply, request: FastifyRequest, answer: ApiAnswer) =>
      page(
        reply,
        request,
        'error',
        {
          title: 'Not available',
          heading: `HTTP ${answer.status}`,
          message: answer.body?.error?.message ?? 'the API refused',
        },
        answer.status,
      );
    /** An action's outcome, swapped into the page's result area (a 409 shows its details inline). */
    const result = (
      reply: FastifyReply,
      answer: ApiAnswer,
      heading: string,
      detailsOf: (body: any) => unknown = (b) => b,
    ) => {
      const ok = answer.status < 300;
      return reply.type('text/html; charset=utf-8').send(
        render(
          'result',
          ok
            ? { ok, heading, status: answer.status, message: null, details: detailsOf(answer.body), h }
            : {
                ok,
                heading: `Refused: ${answer.body?.error?.code ?? 'error'}`,
                status: answer.status,
                message: answer.body?.error?.message,
                details: answer.body?.error?.details ?? null,
                h,
              },
        ),
      );
    };

    api.get(`${STATIC}htmx.min.js`, async (_request, reply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(htmx),
    );
    api.get(`${STATIC}console.css`, async (_request, reply) =>
      reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
    );

    // browsers ask for it on every page: answered without a session, with nothing
    api.get(FAVICON, async (_request, reply) => reply.status(204).send());
    api.get(SIGN_IN, async (request, reply) => page(reply, request, 'sign-in', { title: 'Sign in', error: null }));
    api.post(
      SIGN_IN,
      { schema: { body: form({ token: z.string().max(200).default('') }) } },
      async (request, reply) => {
        assertSameOrigin(request);
        try {
          const created = await signIn(deps, request.body.token);
          setSessionCookie(reply, request, created.secret);
          return reply.redirect(CONSOLE_PREFIX, 303);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return page(reply, request, 'sign-in', { title: 'Sign in', error: error.message }, 401);
        }
      },
    );
    api.post(`${CONSOLE_PREFIX}/sign-out`, async (request, reply) => {
      await signOut(deps, session(request));
      setSessionCookie(reply, request, null);
      return reply.redirect(SIGN_IN, 303);
    });

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
        const [tree, holds, watchdog, agents] = await Promise.all([
          call<TreeNode>(request, 'GET', `/api/issues/${id}/tree?depth=1`),
          call(request, 'GET', `/api/issues/${id}/tree-holds`),
          call(request, 'GET', `/api/issues/${id}/watchdog`),
          call(request, 'GET', `/api/companies/${session(request).companyId}/agents`),
        ]);
        for (const answer of [tree, holds, watchdog, agents])
          if (answer.status !== 200) return refused(reply, request, answer);
        const data = {
          title: tree.body.title,
          tree: tree.body,
          holds: [...holds.body.items].reverse(),
          watchdog: watchdog.body,
          agents: agents.body.items,
        };
        return page(reply, request, request.query.fragment ? 'tree-live' : 'tree', data);
      },
    );
    /** One level of the tree, fetched when a node is first expanded (a large subtree is never rendered whole). */
    api.get(
      `${CONSOLE_PREFIX}/issues/:id/children`,
      { schema: { params: idParams('id'), querystring: pageQuery } },
      async (request, reply) => {
        const { offset, limit } = request.query;
        const tree = await call<TreeNode>(
          request,
          'GET',
          `/api/issues/${request.params.id}/tree?depth=1&offset=${offset}&limit=${limit}`,
        );
        if (tree.status !== 200) return refused(reply, request, tree);
        return page(reply, request, 'children', {
          parentId: tree.body.id,
          nodes: tree.body.children ?? [],
          more: tree.body.moreChildren,
          offset,
        });
      },
    );
    /** Fresh badges for one expanded level, swapped into place out of band (expanded children stay open). */
    api.get(
      `${CONSOLE_PREFIX}/issues/:id/badges`,
      { schema: { params: idParams('id'), querystring: pageQuery } },
      async (request, reply) => {
        const { offset, limit } = request.query;
        const tree = await call<TreeNode>(
          request,
          'GET',
          `/api/issues/${request.params.id}/tree?depth=1&offset=${offset}&limit=${limit}`,
        );
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
        const ids: string[] = hold.body.members
          .map((m: { issueId: string }) => m.issueId)
          .concat(hold.body.rootIssueId);
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
        };
        return page(reply, request, request.query.fragment ? 'hold-live' : 'hold', data);
      },
    );

    // ---- actions: each returns the fragment shown in the page's result area ----

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
          body: form({ agentId: z.string(), instructions: z.string().max(20_000).optional() }),
        },
      },
      async (request, reply) => {
        const { agentId, instructions } = request.body;
        const answer = await call(request, 'PUT', `/api/issues/${request.params.id}/watchdog`, {
          agentId,
          instructions: instructions?.trim() ? instructions : null,
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
  };
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
export function resumeState(
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
