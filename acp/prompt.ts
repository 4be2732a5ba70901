/**
 * The owed prompt: the one `session/prompt` a run sends, built from its wake. Files are embedded, bounded; the run
 * token never is (a prompt goes to the model's provider): the agent finds it in its environment.
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';
import type { Fallback, SessionOrigin } from './session-rules';

export const CONTEXT_MAX_CHARS = 32_000;
export const CAPSULE_MAX_CHARS = 16_000;

export interface WakeFacts {
  issueId: string | null;
  wakeReason: string | null;
  runId: string | null;
  workspace: string;
  /** the context file's text, null when there is none */
  context: string | null;
  /** the capsule file's text, null when the run has none */
  capsule: string | null;
  origin: SessionOrigin;
  /** why a previous session was not continued */
  fallback: Fallback | null;
}

function bounded(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length <= max
    ? trimmed
    : `${trimmed.slice(0, max)}\n… (${trimmed.length - max} more characters in the file)`;
}

function sessionParagraph(f: WakeFacts): string | null {
  if (f.origin !== 'new')
    return (
      'This continues your own session after treewarden stopped it (a pause or a stop); everything before the ' +
      'stop is in this session. A tool call that was interrupted has no result: check the workspace before you ' +
      'repeat anything.'
    );
  if (f.fallback)
    return (
      `Your previous session${f.fallback.sessionId ? ` ${f.fallback.sessionId}` : ''} could not be continued ` +
      `(${f.fallback.reason}${f.fallback.detail ? `: ${f.fallback.detail}` : ''}). This is a new session: the ` +
      'recovery capsule below says what the earlier run did.'
    );
  return null;
}

export function buildPrompt(f: WakeFacts): ContentBlock[] {
  const paragraphs = [
    `treewarden woke you for issue ${f.issueId ?? '(unknown)'} (wake reason: ${f.wakeReason ?? 'unknown'}` +
      `${f.runId ? `, run ${f.runId}` : ''}).`,
    sessionParagraph(f),
    `Your workspace is ${f.workspace}. The treewarden API is at the URL in TREEWARDEN_API_URL; call it with the ` +
      'bearer token in the TREEWARDEN_RUN_TOKEN environment variable.',
    f.context === null
      ? null
      : `The wake's context (TREEWARDEN_CONTEXT_FILE):\n\`\`\`json\n${bounded(f.context, CONTEXT_MAX_CHARS)}\n\`\`\``,
    f.capsule === null
      ? null
      : `Recovery capsule (TREEWARDEN_CAPSULE_FILE), what the earlier run did:\n\`\`\`json\n` +
        `${bounded(f.capsule, CAPSULE_MAX_CHARS)}\n\`\`\``,
  ];
  return [{ type: 'text', text: paragraphs.filter((p): p is string => p !== null).join('\n\n') }];
}
