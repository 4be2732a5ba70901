/**
 * Route schemas: the zod objects on each route are both fastify's request validation and the source of
 * the OpenAPI document (`/api/openapi.json`, rendered at `/api/docs`), so the two cannot differ.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest, FastifySchema, FastifyTypeProvider } from 'fastify';
import { z } from 'zod';
import { AppError } from '../domain/errors';
import { componentRegistry } from './schemas';

/** Handlers see the parsed output of their route's zod schemas (defaults applied, strings trimmed). */
export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  // answers are checked when sent (zodSerializerCompiler): handlers hand over rows whose enums are plain strings
  serializer: unknown;
}

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PREFIX = '/api/docs';

/** Served without a bearer token: the document, its page, and routes that check their own session (the console). */
export function isPublicRoute(request: FastifyRequest): boolean {
  const url = request.routeOptions.url ?? '';
  return (
    request.routeOptions.config.public === true ||
    url === OPENAPI_PATH ||
    url === DOCS_PREFIX ||
    url.startsWith(`${DOCS_PREFIX}/`)
  );
}

const isZod = (value: unknown): value is z.ZodType => value instanceof z.ZodType;

/** Validates one part of a request with its route's zod schema; a malformed path id is a 400 naming it. */
export function zodValidatorCompiler({ schema, httpPart }: { schema: unknown; httpPart?: string }) {
  if (!isZod(schema)) throw new Error(`route schema for ${httpPart ?? 'request'} must be a zod schema`);
  return (data: unknown) => {
    // fastify hands an absent body over as null; routes treat it as `{}`
    const result = schema.safeParse(httpPart === 'body' ? (data ?? {}) : data);
    if (result.success) return { value: result.data };
    if (httpPart === 'params') {
      const issue = result.error.issues[0];
      return { error: new AppError('bad_request', `malformed id in path: ${issue.path.join('.')} ${issue.message}`) };
    }
    return { error: result.error };
  };
}

const COMPONENTS = '#/components/schemas/';
const toJson = (schema: z.ZodType | typeof componentRegistry, io: 'input' | 'output') =>
  z.toJSONSchema(
    schema as z.ZodType,
    {
      io,
      unrepresentable: 'any',
      target: 'openapi-3.0',
      metadata: componentRegistry,
      uri: (id: string) => COMPONENTS + id,
    } as never,
  ) as Record<string, unknown>;

/** JSON Schema of a request part, as the client sends it (before zod's defaults and transforms). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = toJson(schema, 'input');
  return rest;
}

/** JSON Schema of an answer, as sent: a named shape (api/schemas.ts) is a `$ref` to its component. */
export function responseSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const id = componentRegistry.get(schema)?.id;
  if (id) return { $ref: COMPONENTS + id };
  const { $schema: _dialect, definitions: _named, ...rest } = toJson(schema, 'output');
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/definitions/', `"${COMPONENTS}`)) as Record<string, unknown>;
}

/** The named response shapes, as the document's `components.schemas`. */
function componentSchemas(): Record<string, unknown> {
  const { schemas } = toJson(componentRegistry, 'output') as { schemas: Record<string, Record<string, unknown>> };
  return Object.fromEntries(Object.entries(schemas).map(([id, { $id: _uri, ...schema }]) => [id, schema]));
}

/** A response that does not match its route's schema: a bug of the server, never sent as it is. */
export class ResponseShapeError extends Error {
  override readonly name = 'ResponseShapeError';
}

/** Serializes an answer as its route's schema for that status describes it (unknown fields left out). */
export function zodSerializerCompiler({
  schema,
  method,
  url,
  httpStatus,
}: {
  schema: unknown;
  method: string;
  url: string;
  httpStatus?: string;
}) {
  if (!isZod(schema)) return (data: unknown) => JSON.stringify(data);
  return (data: unknown) => {
    const result = schema.safeParse(data);
    if (result.success) return JSON.stringify(result.data);
    const problem = z.prettifyError(result.error);
    throw new ResponseShapeError(`${method} ${url} ${httpStatus}: the answer does not match its schema: ${problem}`);
  };
}

function toOpenApiSchema(schema: FastifySchema): FastifySchema {
  const out: Record<string, unknown> = {};
  for (const [part, value] of Object.entries(schema)) {
    if (isZod(value)) out[part] = jsonSchemaOf(value);
    else if (part === 'response' && value && typeof value === 'object') {
      out[part] = Object.fromEntries(
        Object.entries(value).map(([status, s]) => [status, isZod(s) ? responseSchemaOf(s) : s]),
      );
    } else out[part] = value;
  }
  return out as FastifySchema;
}

/**
 * Registers validation by zod, the document and its rendered page. Call before registering the routes
 * in a plugin (`app.register`), so the document's onRoute hook sees each of them.
 */
export function registerOpenApi(app: FastifyInstance): void {
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(zodSerializerCompiler);
  void app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'treewarden',
        version: '0.1.0',
        description: 'Control plane for AI-agent work trees on Temporal: task watchdogs, tree holds, run supervision.',
      },
      components: {
        schemas: componentSchemas() as never,
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'admin token, company board token or run token',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: ({ schema, url }) => ({ schema: schema ? toOpenApiSchema(schema) : schema, url }),
  });
  void app.register(swaggerUi, { routePrefix: DOCS_PREFIX, staticCSP: true });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}
