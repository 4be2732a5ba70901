/**
 * The per-run ACP supervisor (issue 46): treewarden runs it as a `process` run's command, inside the run's sandbox
 * and cgroup, so the ACP client lives with the agent and outlives a worker (adoption of process runs covers it).
 *
 *   bin/treewarden-acp -- <agent command> [args...]
 *
 * It starts the agent as its child, speaks ACP to it as the client, continues the session a checkpoint names (or
 * opens one), records it, sends the owed prompt and journals the turn. See docs/run-supervision.md, "ACP agents".
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { EXIT, supervisorConfig, type SupervisorConfig } from './config';
import { RunSupervisor } from './run-supervisor';

/** A file's real path, or its folder's real path and name when it does not exist yet. */
function realOrPlanned(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(file)), path.basename(file));
    } catch {
      return path.resolve(file);
    }
  }
}

/** treewarden's files, never written through the protocol (a run without `cwd` works in its run folder) */
const protectedPathsOf = (c: SupervisorConfig): Set<string> =>
  new Set(
    [c.journalFile, c.checkpointFile, c.sessionFile, c.contextFile, c.capsuleFile]
      .filter((f): f is string => f !== null)
      .map(realOrPlanned),
  );

async function main(): Promise<number> {
  let workspace: string;
  try {
    workspace = realpathSync(process.cwd());
  } catch (error) {
    process.stderr.write(`treewarden-acp: the workspace (cwd) cannot be resolved: ${error}\n`);
    return EXIT.usage;
  }
  const parsed = supervisorConfig(process.argv.slice(2), process.env, workspace);
  if (!parsed.ok) {
    process.stderr.write(`treewarden-acp: ${parsed.error}\n`);
    return EXIT.usage;
  }
  const supervisor = new RunSupervisor(parsed.config, protectedPathsOf(parsed.config));
  const fatal = (error: unknown) => {
    process.stderr.write(`treewarden-acp: unexpected failure, ending the agent: ${error}\n`);
    supervisor.killAgentNow();
    process.exit(EXIT.agentFailed);
  };
  process.on('uncaughtException', fatal);
  // the SDK leaves a failed write to a gone agent unawaited; the request it carried fails and says why
  process.on('unhandledRejection', (reason) => {
    process.stderr.write(`treewarden-acp: (a rejection nobody awaited: ${reason})\n`);
  });
  process.on('SIGTERM', () => supervisor.requestStop('SIGTERM'));
  process.on('SIGINT', () => supervisor.requestStop('SIGINT'));
  return supervisor.run();
}

if (require.main === module)
  void main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`treewarden-acp: ${error}\n`);
      process.exit(EXIT.agentFailed);
    },
  );
