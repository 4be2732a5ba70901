/**
 * `Idempotency-Key` on the routes that create things: the first request's response is stored in
 * the transaction that creates the row, under a unique (company, key); a retry of the same request
 * gets that response again and writes nothing, and the same key with another request is refused.
 */
import { createHash } from 'node:crypto';
import { isUniqueViolation, type Db, type Tx } from './prisma';
import { AppError } from '../domain/errors';

export interface IdempotencyClaim {
  companyId: string;
  key: string;
  /** what makes two requests "the same": route, actor and body */
  requestHash: string;
}

export interface StoredReply {
  status: number;
  body: unknown;
}

/** Stores the reply inside the creating transaction; a no-op without a key. */
export type RememberReply = (tx: Tx, reply: StoredReply) => Promise<void>;

export function requestHashOf(request: { route: string; actor: string; params: unknown; body: unknown }): string {
  return createHash('sha256')
    .update(JSON.stringify([request.route, request.actor, request.params, request.body ?? null]))
    .digest('hex');
}

/**
 * Runs `create` at most once per claim. `create` must call `remember` in the transaction that
 * writes the row; a racing twin then fails on the unique key, its transaction rolls back, and it
 * answers with the winner's reply.
 */
export async function oncePerIdempotencyKey(
  db: Db,
  claim: IdempotencyClaim | null,
  create: (remember: RememberReply) => Promise<StoredReply>,
): Promise<StoredReply & { replayed: boolean }> {
  if (!claim) return { ...(await create(async () => {})), replayed: false };
  const earlier = await storedReply(db, claim);
  if (earlier) return { ...earlier, replayed: true };
  const remember: RememberReply = async (tx, reply) => {
    await tx.idempotencyRecord.create({
      data: {
        companyId: claim.companyId,
        key: claim.key,
        requestHash: claim.requestHash,
        responseStatus: reply.status,
        responseBody: toJson(reply.body),
      },
    });
  };
  try {
    return { ...(await create(remember)), replayed: false };
  } catch (error) {
    const raced = isUniqueViolation(error) ? await storedReply(db, claim) : null;
    if (raced) return { ...raced, replayed: true };
    throw error;
  }
}

async function storedReply(db: Db, claim: IdempotencyClaim): Promise<StoredReply | null> {
  const record = await db.idempotencyRecord.findUnique({
    where: { companyId_key: { companyId: claim.companyId, key: claim.key } },
  });
  if (!record) return null;
  if (record.requestHash !== claim.requestHash) {
    throw new AppError(
      'unprocessable',
      'Idempotency-Key was already used with a different request (another route, actor or body); ' +
        'use a new key for a new request',
    );
  }
  return { status: record.responseStatus, body: record.responseBody };
}

/** The reply as JSON stores it (dates become ISO strings), so a replay is byte-for-byte the same. */
const toJson = (body: unknown): object => JSON.parse(JSON.stringify(body)) as object;
