/** How the CLI fails: its exit codes, and the one mapping from an error to its code and message. */
import { isGrpcServiceError, ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { CommanderError } from 'commander';
import { TreewardenApiError } from '../client';
import { DeploymentNotFoundError } from '../temporal/rollout';

export const EXIT = { ok: 0, error: 1, usage: 2, notFound: 3, conflict: 4, denied: 5 } as const;

/** Bad input caught before anything is called: exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The one place errors become exit codes. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage; // --help is 0
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof WorkflowNotFoundError || error instanceof DeploymentNotFoundError) return EXIT.notFound;
  if (error instanceof TreewardenApiError) {
    if (error.code === 'bad_request') return EXIT.usage;
    if (error.code === 'not_found') return EXIT.notFound;
    if (error.code === 'conflict' || error.code === 'reconciliation_required') return EXIT.conflict;
    if (error.code === 'unauthorized' || error.code === 'forbidden') return EXIT.denied;
    return EXIT.error;
  }
  const grpc = error instanceof ServiceError ? error.cause : error;
  // PERMISSION_DENIED, UNAUTHENTICATED
  if (isGrpcServiceError(grpc) && (grpc.code === 7 || grpc.code === 16)) return EXIT.denied;
  return EXIT.error;
}

export function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause =
    error.cause instanceof Error && !error.message.includes(error.cause.message) ? `: ${error.cause.message}` : '';
  return error.message + cause;
}
