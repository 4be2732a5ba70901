/**
 * What a stop (SIGTERM to the supervisor) leaves: a checkpoint only when the session is at a known point. That is
 * a turn that ended (acknowledged with `stopReason: "cancelled"`, or over on its own) with no tool call open, or a
 * session recorded and not yet prompted. Anything else (no answer in time, a broken connection, a tool call still
 * open, a stop before the session existed) is an unknown outcome: no checkpoint, so treewarden never replays it.
 */
import type { StopReason } from '@agentclientprotocol/sdk';

export type SupervisorPhase = 'starting' | 'ready' | 'prompting' | 'ended';

/** How the turn answered the cancel: its stop reason, or why there is none. */
export type TurnAnswer =
  | { kind: 'stopped'; stopReason: StopReason | string }
  | { kind: 'failed'; error: string }
  | { kind: 'no_answer'; waitedMs: number }
  | { kind: 'not_prompted' };

export interface StopFacts {
  phase: SupervisorPhase;
  answer: TurnAnswer;
  openToolCalls: readonly string[];
}

export interface StopVerdict {
  checkpoint: boolean;
  acknowledged: boolean;
  reason: string;
}

export function stopVerdict(f: StopFacts): StopVerdict {
  if (f.phase === 'starting')
    return { checkpoint: false, acknowledged: false, reason: 'stopped before the session was recorded' };
  if (f.answer.kind === 'not_prompted')
    return { checkpoint: true, acknowledged: true, reason: 'the session was recorded and not yet prompted' };
  if (f.answer.kind === 'failed')
    return { checkpoint: false, acknowledged: false, reason: `the turn failed: ${f.answer.error}` };
  if (f.answer.kind === 'no_answer')
    return { checkpoint: false, acknowledged: false, reason: `no answer to session/cancel in ${f.answer.waitedMs} ms` };
  const acknowledged = f.answer.stopReason === 'cancelled';
  const ended = acknowledged ? 'the agent acknowledged the cancel' : `the turn ended (${f.answer.stopReason})`;
  if (f.openToolCalls.length > 0)
    return {
      checkpoint: false,
      acknowledged,
      reason: `${ended} with tool calls open (${f.openToolCalls.join(', ')}): their outcome is unknown`,
    };
  return { checkpoint: true, acknowledged, reason: `${ended} with no tool call open` };
}
