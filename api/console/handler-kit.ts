/**
 * What every console page and action is built from: the in-process call into the API with the session's
 * own board token, and the three ways an answer reaches the browser (a page, a refusal page, an action result).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../runtime/deps';
import { helpers, render } from './render';
import type { ConsoleSession } from './session';

export const CONSOLE_PREFIX = '/ui';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export interface ApiAnswer<T = any> {
  status: number;
  body: T;
}

export const fragmentQuery = z.object({ fragment: z.string().optional() });
export const pageQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(200),
});
export const form = <T extends z.ZodRawShape>(shape: T) => z.object({ _csrf: z.string().optional(), ...shape });

export type ConsoleKit = ReturnType<typeof consoleKit>;

/** `root` is the whole API, which pages and actions call in-process. */
export function consoleKit(root: FastifyInstance, deps: Deps) {
  const h = helpers(deps.config, deps.temporal.namespace);
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
  return { session, call, page, refused, result };
}
