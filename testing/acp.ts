/**
 * What the tests and the bench share about `acp` runs (issue 46): the ACP fixture agent's command line, and a run's
 * journal as its lines.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runFiles } from '../runs/run-files';
import { REPO_ROOT } from './stack';

/** tsx's loader by its absolute path: an agent's cwd is its workspace, where `--import tsx` would not resolve */
export const TSX_LOADER = path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');

/** test/fixtures/acp-agent.ts, as an `acp` adapter's `command` and `args` (its mode comes from its env) */
export const ACP_FIXTURE = {
  command: process.execPath,
  args: ['--import', TSX_LOADER, path.join(REPO_ROOT, 'test', 'fixtures', 'acp-agent.ts')],
};

/** A journal line: the supervisor's (acp/journal-lines.ts); a line that is not JSON (a `process` agent's) as text. */
export interface JournalLine {
  kind: string;
  at?: string;
  text?: string;
  status?: string;
  stopReason?: string;
  toolKind?: string;
  toolCallId?: string;
  answer?: string;
  ids?: string[];
  acknowledged?: boolean;
  checkpoint?: boolean;
}

export function journalOf(runId: string, workspace: string | null): JournalLine[] {
  const file = runFiles(runId, workspace).journal;
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line) as JournalLine;
      } catch {
        return { kind: 'text', text: line };
      }
    });
}
