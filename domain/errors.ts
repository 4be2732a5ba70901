/** Every refusal the service can give, as a closed union mapped to one HTTP status each. */
export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  /** a release with `wakeAgents` while a member still needs reconciliation (a 409 clients tell apart) */
  | 'reconciliation_required'
  /** a watchdog run writing while its watchdog cannot read the whole subtree (seed 000's incompleteness gate) */
  | 'subtree_incomplete'
  | 'unprocessable'
  | 'payload_too_large'
  | 'unavailable';

export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'bad_request':
      return 400;
    case 'unauthorized':
      return 401;
    case 'forbidden':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
    case 'reconciliation_required':
    case 'subtree_incomplete':
      return 409;
    case 'unprocessable':
      return 422;
    case 'payload_too_large':
      return 413;
    case 'unavailable':
      return 503;
    default:
      return assertNever(code);
  }
}

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);

export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
