/**
 * Scenario 2's load generator, a process of its own as a main app is: reads `{ apiUrl, token, rate, changes }` as
 * JSON on stdin and makes each change the way the main app would, `PATCH /api/issues/:id` with the board token, at a
 * steady `rate` per second. Prints `{ changedAt }` (each change's start, ms since the epoch) as one JSON line.
 */
import { callApi } from '../testing/service-stack';
import { paced } from './worlds';

export interface ChangeLoad {
  apiUrl: string;
  token: string;
  rate: number;
  changes: { issueId: string; patch: { title: string } | { status: string; blockedReason: string } }[];
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const load = JSON.parse(Buffer.concat(chunks).toString()) as ChangeLoad;
  const refused: string[] = [];
  const changedAt = await paced(load.changes.length, load.rate, async (i) => {
    const { issueId, patch } = load.changes[i];
    const response = await callApi(load.apiUrl, 'PATCH', `/api/issues/${issueId}`, load.token, patch);
    if (response.status !== 200) refused.push(`${issueId}: ${response.status} ${JSON.stringify(response.body)}`);
  });
  if (refused.length > 0) throw new Error(`${refused.length} changes refused, first: ${refused[0]}`);
  process.stdout.write(`${JSON.stringify({ changedAt })}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
