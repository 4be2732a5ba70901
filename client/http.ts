/** The client's transport: one JSON call with the bearer token, and the API's error body as an exception. */
import type { ErrorCode } from '../domain/errors';

export interface TreewardenClientOptions {
  /** e.g. `http://127.0.0.1:8787` */
  baseUrl: string;
  /** admin token (companies) or a company board token (everything else) */
  token: string;
  fetch?: typeof fetch;
}

/** A non-2xx answer: the API's `{ error: { code, message, details? } }`. */
export class TreewardenApiError extends Error {
  override readonly name = 'TreewardenApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/**
 * For the routes that create things: a retry with the same key and the same request answers the
 * first response and writes nothing (a 503 on a write may have been applied).
 */
export interface CreateOptions {
  idempotencyKey?: string;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Call = <T>(method: Method, url: string, body?: unknown, options?: CreateOptions) => Promise<T>;

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'unprocessable',
};

export function transport({ baseUrl, token, fetch: fetchImpl = fetch }: TreewardenClientOptions): Call {
  const root = baseUrl.replace(/\/+$/, '');
  return async function call<T>(method: Method, url: string, body?: unknown, options: CreateOptions = {}): Promise<T> {
    const response = await fetchImpl(root + url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.ok) return (text ? JSON.parse(text) : null) as T;
    let error: { code?: ErrorCode; message?: string; details?: unknown } | undefined;
    try {
      error = (JSON.parse(text) as { error?: typeof error }).error;
    } catch {
      // not the API's error body (e.g. a proxy's page): classify by status
    }
    throw new TreewardenApiError(
      response.status,
      error?.code ?? CODE_BY_STATUS[response.status] ?? 'unavailable',
      error?.message ?? `${method} ${url}: HTTP ${response.status}`,
      error?.details,
    );
  };
}

/** A path with its ids encoded: path`/api/issues/${id}`. */
export const path = (strings: TemplateStringsArray, ...params: string[]) =>
  strings.reduce((out, s, i) => out + s + (i < params.length ? encodeURIComponent(params[i]) : ''), '');

export const query = (params: object) => {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return '';
  return `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
};
