/**
 * The SQL statements this process sends while `body` runs, with their parameters: Prisma's pg adapter sends every
 * query through pg.Client's query, so wrapping it sees them all (the in-process worker's and API's alike).
 */
import pg from 'pg';

export interface SentStatement {
  text: string;
  values: unknown[];
}

export async function statementsSentDuring<T>(body: () => Promise<T>): Promise<{ result: T; sent: SentStatement[] }> {
  const sent: SentStatement[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function recordedQuery(this: pg.Client, ...args: unknown[]) {
    const [first, second] = args as [string | { text?: string; values?: unknown[] }, unknown];
    if (typeof first === 'string') sent.push({ text: first, values: Array.isArray(second) ? second : [] });
    else if (first?.text) sent.push({ text: first.text, values: first.values ?? [] });
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { result: await body(), sent };
  } finally {
    pg.Client.prototype.query = original;
  }
}
