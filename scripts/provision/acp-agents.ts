/**
 * ACP agents for the tests that run a real one: the agent is the user's to install, not a treewarden dependency, so
 * the test's setup installs a pinned release into the user cache,
 * `${XDG_CACHE_HOME:-$HOME/.cache}/treewarden/agents/<name>-<version>`, with
 * `npm install --no-save --no-audit --no-fund --ignore-scripts --prefix <staging>` (none of its packages has an
 * install script), then an atomic rename into place. A marker file written last says the install is complete; a
 * folder without it is an interrupted install and is replaced. Installs are serialised by the install lock
 * (install-lock.ts), so two jest workers don't install at once.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { withInstallLock } from './install-lock';
import { temporalCacheDir } from './temporal-cli';

type Log = (line: string) => void;

const defaultLog: Log = (line) => {
  process.stderr.write(`[acp-agents] ${line}\n`);
};

/** Claude Code's ACP agent (it pulls the native `claude` binary through @anthropic-ai/claude-agent-sdk). */
export const CLAUDE_AGENT_ACP = { name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0' } as const;

const MARKER = '.treewarden-installed';
/** 111 packages, about 400 MB: 11 s measured from registry.npmjs.org, with or without npm's cache */
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** `${XDG_CACHE_HOME:-$HOME/.cache}/treewarden/agents` */
export function agentsCacheDir(): string {
  return path.join(path.dirname(temporalCacheDir()), 'agents');
}

/** Returns the path of claude-agent-acp's `dist/index.js`, installing the pinned release first if needed. */
export function ensureClaudeAgentAcp(log: Log = defaultLog): Promise<string> {
  return ensureNpmAgent(CLAUDE_AGENT_ACP, path.join('dist', 'index.js'), log);
}

async function ensureNpmAgent(pkg: { name: string; version: string }, entry: string, log: Log): Promise<string> {
  const spec = `${pkg.name}@${pkg.version}`;
  const root = agentsCacheDir();
  const dir = path.join(root, `${pkg.name.split('/').pop()}-${pkg.version}`);
  const main = path.join(dir, 'node_modules', ...pkg.name.split('/'), entry);
  const installed = () => fs.existsSync(path.join(dir, MARKER)) && fs.existsSync(main);
  if (installed()) return main;

  fs.mkdirSync(root, { recursive: true });
  await withInstallLock(
    path.join(root, `.${path.basename(dir)}-install.lock`),
    log,
    async () => {
      if (installed()) return; // another process finished while we waited
      for (const leftover of fs.readdirSync(root).filter((e) => e.startsWith(`.staging-${path.basename(dir)}-`))) {
        log(`removing leftover ${path.join(root, leftover)} from an interrupted install`);
        fs.rmSync(path.join(root, leftover), { recursive: true, force: true });
      }
      const staging = path.join(root, `.staging-${path.basename(dir)}-${process.pid}`);
      fs.mkdirSync(staging);
      const started = Date.now();
      const registry = await npm(['config', 'get', 'registry'], root, 30_000).catch(() => 'the configured registry');
      log(`installing ${spec} from ${registry.trim()} into ${dir} (111 packages, about 400 MB)`);
      const args = ['install', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', '--prefix', staging, spec];
      try {
        await npm(args, root, INSTALL_TIMEOUT_MS);
        if (!fs.existsSync(path.join(staging, 'node_modules', ...pkg.name.split('/'), entry)))
          throw new Error(`the install has no ${entry}`);
        fs.writeFileSync(path.join(staging, MARKER), `${spec}\n${new Date().toISOString()}\n`);
        fs.rmSync(dir, { recursive: true, force: true }); // an install without its marker
        fs.renameSync(staging, dir);
      } catch (error) {
        fs.rmSync(staging, { recursive: true, force: true });
        throw new Error(
          `could not install the ACP agent ${spec}: \`npm ${args.join(' ')}\` from ${registry.trim()} failed ` +
            `after ${((Date.now() - started) / 1000).toFixed(1)} s: ${(error as Error).message}`,
        );
      }
      log(`installed ${spec} into ${dir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
    spec,
  );
  if (!installed()) throw new Error(`${spec} is not installed in ${dir} after the install`);
  return main;
}

/** `npm <args>`: stdout, or an error with what npm said of the failure (its code and message, not its stack). */
function npm(args: string[], cwd: string, timeout: number): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      'npm',
      args,
      { cwd, timeout, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        if (error.killed) return reject(new Error(`npm was stopped after ${timeout / 1000} s`));
        const said = stderr
          .split('\n')
          .filter((l) => /^npm error /.test(l) && !/^npm error (\s|[{}]|A complete log)/.test(l))
          .slice(0, 6);
        reject(new Error(said.length ? said.join('; ') : `npm exited with code ${error.code}: ${stderr.trim()}`));
      },
    ),
  );
}
