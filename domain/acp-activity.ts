/**
 * An `acp` run's activity as its supervisor reports it (issue 46): the last tool calls with their status, the last
 * agent message, the permission decisions (what was asked, what the policy answered) and the usage the agent
 * reported. The supervisor runs inside the run's sandbox, where the agent can read the run's token, so a report is
 * as untrusted as the agent: every list and string is bounded here, and a report changes nothing but what is shown
 * and counted for its own run.
 */
import { z } from 'zod';
import { safeString } from './safe-input';

/** The last tool calls and permission decisions kept; older ones stay in the run's journal. */
export const ACTIVITY_ITEMS_MAX = 20;
/** A title or reason's bound. */
export const ACTIVITY_TEXT_MAX = 200;
/** The last message's bound (its end is kept: the latest words). */
export const ACTIVITY_MESSAGE_MAX = 1000;

const text = (max = ACTIVITY_TEXT_MAX) => safeString().max(max);
const count = z.number().int().min(0).max(2_147_483_647);

export const acpActivitySchema = z
  .object({
    toolCalls: z
      .array(
        z
          .object({ toolCallId: text(), title: text().nullable(), kind: text(40).nullable(), status: text(40) })
          .strict(),
      )
      .max(ACTIVITY_ITEMS_MAX),
    lastMessage: text(ACTIVITY_MESSAGE_MAX).nullable(),
    permissions: z
      .array(
        z
          .object({
            toolCallId: text(),
            title: text().nullable(),
            locations: z.array(text(512)).max(8),
            decision: text(40),
            optionId: text().nullable(),
            reason: text(),
          })
          .strict(),
      )
      .max(ACTIVITY_ITEMS_MAX),
    usage: z
      .object({
        /** tokens of this run's turns, summed (PromptResponse.usage); null when the agent reported none */
        tokens: count.nullable(),
        /** the session's cumulative cost as last reported (usage_update); null when none was */
        cost: z
          .object({ amount: z.number().min(0).max(1e9), currency: text(16) })
          .strict()
          .nullable(),
        /** tokens in its context and its window, as last reported (usage_update) */
        context: z.object({ used: count, size: count }).strict().nullable(),
      })
      .strict(),
  })
  .strict();

export type AcpActivity = z.infer<typeof acpActivitySchema>;

/** How a message policy lets a person's comment reach a live run's agent (the `acp` adapter's `messages`). */
export const ACP_MESSAGE_POLICIES = ['after_turn', 'interrupt'] as const;
export type AcpMessagePolicy = (typeof ACP_MESSAGE_POLICIES)[number];
