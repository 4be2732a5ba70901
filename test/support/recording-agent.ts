/** An agent process that hands the test its run token and context, as an attacker's agent would have them. */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { eventually, type seedCompany } from '../../testing/harness';

type Company = Awaited<ReturnType<typeof seedCompany>>;

/**
 * An agent that writes its token and the context it was given to files, then runs until told to finish (exit 0)
 * and ignores SIGTERM.
 */
export async function recordingAgent(c: Company) {
  const base = `/tmp/tw-authority-${randomBytes(6).toString('hex')}`;
  const files = { token: `${base}.token`, context: `${base}.context`, done: `${base}.done` };
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: [
      '-c',
      'trap "" TERM; cat "$TREEWARDEN_CONTEXT_FILE" > "$CTX"; echo "$TREEWARDEN_RUN_TOKEN" > "$TOKEN"; ' +
        'while [ ! -f "$DONE" ]; do sleep 0.2; done',
    ],
    env: { TOKEN: files.token, CTX: files.context, DONE: files.done },
  });
  const read = (file: string) =>
    eventually(`the agent wrote ${file}`, async () => (existsSync(file) && readFileSync(file, 'utf8').trim()) || null);
  return {
    agent,
    token: () => read(files.token),
    context: async () => JSON.parse(await read(files.context)) as Record<string, unknown>,
    finish: () => writeFileSync(files.done, ''),
  };
}
