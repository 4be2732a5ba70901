/**
 * What the run shows of its agent's work (issue 46): the supervisor folds the session's updates, its permission
 * answers and the usage the agent reports into a bounded summary (domain/acp-activity.ts) and reports it with the
 * run's token (`PUT /api/runs/:id/acp-activity`): at most every TREEWARDEN_ACP_REPORT_MS while something changes,
 * and once more before it exits. A report that cannot be made is journaled, never fatal.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { ACTIVITY_ITEMS_MAX, ACTIVITY_MESSAGE_MAX, ACTIVITY_TEXT_MAX, type AcpActivity } from '../domain/acp-activity';
import { stringProblem } from '../domain/safe-input';
import type { Journal } from './files';
import { callRunApi, type LedgerAccess } from './ledger';

type ToolCall = AcpActivity['toolCalls'][number];
type Permission = AcpActivity['permissions'][number];

const INT_MAX = 2_147_483_647;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text the API accepts: no NUL or lone surrogate, at most `max` characters (the start, or the end with `tail`). */
export function bounded(text: string, max = ACTIVITY_TEXT_MAX, tail = false): string {
  const cut = text.length <= max ? text : tail ? `…${text.slice(-(max - 1))}` : `${text.slice(0, max - 1)}…`;
  // after the cut, which may split a surrogate pair
  return stringProblem(cut) === null ? cut : cut.replace(/\0/g, '').replace(LONE_SURROGATE, '\uFFFD');
}

const count = (n: unknown): number | null =>
  typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.min(Math.floor(n), INT_MAX) : null;

export class ActivityLog {
  private readonly tools = new Map<string, ToolCall>();
  private readonly permissions: Permission[] = [];
  private message: string | null = null;
  private inMessage = false;
  private tokens: number | null = null;
  private cost: AcpActivity['usage']['cost'] = null;
  private context: AcpActivity['usage']['context'] = null;

  observe(update: SessionUpdate): void {
    const wasMessage = this.inMessage;
    this.inMessage = false;
    switch (update.sessionUpdate) {
      case 'agent_message_chunk': {
        const text = update.content.type === 'text' ? update.content.text : `[${update.content.type}]`;
        this.message = bounded(`${wasMessage ? (this.message ?? '') : ''}${text}`, ACTIVITY_MESSAGE_MAX, true);
        this.inMessage = true;
        return;
      }
      case 'tool_call':
        this.tool(update.toolCallId, {
          title: update.title,
          kind: update.kind ?? null,
          status: update.status ?? 'pending',
        });
        return;
      case 'tool_call_update':
        this.tool(update.toolCallId, {
          ...(update.title ? { title: update.title } : {}),
          ...(update.status ? { status: update.status } : {}),
        });
        return;
      case 'usage_update': {
        const used = count(update.used);
        const size = count(update.size);
        this.context = used === null || size === null ? this.context : { used, size };
        const amount = update.cost?.amount;
        if (typeof amount === 'number' && Number.isFinite(amount) && amount >= 0 && update.cost)
          this.cost = { amount: Math.min(amount, 1e9), currency: bounded(String(update.cost.currency), 16) };
        return;
      }
      default:
        this.inMessage = wasMessage && update.sessionUpdate === 'agent_thought_chunk';
    }
  }

  permission(p: Permission): void {
    this.permissions.push({
      toolCallId: bounded(p.toolCallId),
      title: p.title === null ? null : bounded(p.title),
      locations: p.locations.slice(0, 8).map((l) => bounded(l, 512)),
      decision: bounded(p.decision, 40),
      optionId: p.optionId === null ? null : bounded(p.optionId),
      reason: bounded(p.reason),
    });
    if (this.permissions.length > ACTIVITY_ITEMS_MAX) this.permissions.shift();
  }

  /** A turn's `usage` (PromptResponse.usage, per turn): its total tokens are added to the run's. */
  turnUsage(usage: unknown): void {
    const total = count((usage as { totalTokens?: unknown } | null | undefined)?.totalTokens);
    if (total !== null) this.tokens = Math.min((this.tokens ?? 0) + total, INT_MAX);
  }

  snapshot(): AcpActivity {
    return {
      toolCalls: [...this.tools.values()],
      lastMessage: this.message,
      permissions: [...this.permissions],
      usage: { tokens: this.tokens, cost: this.cost, context: this.context },
    };
  }

  private tool(id: string, change: Partial<Omit<ToolCall, 'toolCallId'>>): void {
    const key = bounded(id);
    const known = this.tools.get(key) ?? { toolCallId: key, title: null, kind: null, status: 'pending' };
    this.tools.delete(key); // the latest at the end
    this.tools.set(key, {
      toolCallId: key,
      title: change.title === undefined || change.title === null ? known.title : bounded(change.title),
      kind: change.kind === undefined || change.kind === null ? known.kind : bounded(change.kind, 40),
      status: change.status === undefined ? known.status : bounded(change.status, 40),
    });
    if (this.tools.size > ACTIVITY_ITEMS_MAX) this.tools.delete(this.tools.keys().next().value!);
  }
}

/** Reports the log's snapshot through the run API: throttled while it changes, one report in flight at a time. */
export class ActivityReporter {
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly access: LedgerAccess | null,
    readonly log: ActivityLog,
    private readonly everyMs: number,
    private readonly journal: Journal,
  ) {}

  changed(): void {
    if (!this.access) return;
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.everyMs);
    this.timer.unref();
  }

  /** The latest snapshot, reported after any report in flight; resolves once it was made or given up. */
  flush(): Promise<void> {
    const access = this.access;
    if (!access || !this.dirty) return this.chain;
    this.dirty = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const body = this.log.snapshot();
    this.chain = this.chain.then(() =>
      callRunApi(access, 'PUT', 'acp-activity', 'the activity report was not recorded', body).then(
        () => undefined,
        (error: unknown) => this.journal.write({ kind: 'activity_unreported', text: String(error) }),
      ),
    );
    return this.chain;
  }
}
