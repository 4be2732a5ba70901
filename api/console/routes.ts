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
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../domain/errors';
import type { Deps } from '../../runtime/deps';
import type { ZodTypeProvider } from '../openapi';
import { registerConsoleActions } from './actions';
import { CONSOLE_PREFIX, consoleKit, form } from './handler-kit';
import { registerConsolePages } from './pages';
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

const SIGN_IN = `${CONSOLE_PREFIX}/sign-in`;
const STATIC = `${CONSOLE_PREFIX}/static/`;
const FAVICON = '/favicon.ico';

const htmx = readFileSync(require.resolve('htmx.org/dist/htmx.min.js'));
const css = readFileSync(join(__dirname, 'static', 'console.css'));

/** Registers the console; `root` is the whole API, which pages and actions call in-process. */
export function consolePlugin(root: FastifyInstance, deps: Deps) {
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
    const kit = consoleKit(root, deps);
    const { session, page } = kit;

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

    registerConsolePages(app, deps, kit);
    registerConsoleActions(app, kit);
  };
}
