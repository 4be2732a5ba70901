/**
 * An `acp` run's activity (issue 46): its supervisor reports, with the run's token, the last tool calls, message and
 * permission decisions and the usage its agent reported (domain/acp-activity.ts bounds them), while the run is
 * running; the run shows them (`acpActivity`) and the postmortem counts the usage. A report replaces the last one.
 */
import type { AcpActivity } from '../domain/acp-activity';
import type { Deps } from '../runtime/deps';
import { claimingRun } from './acp-sessions';

export async function recordAcpActivity(deps: Deps, runId: string, activity: AcpActivity): Promise<{ runId: string }> {
  const { usage } = activity;
  // only a running run's row: a report that arrives after the run ended changes nothing
  const { count } = await deps.db.run.updateMany({
    where: { id: runId, status: 'running' },
    data: {
      acpActivity: activity as object,
      usageTokens: usage.tokens,
      usageCost: usage.cost?.amount ?? null,
      usageCurrency: usage.cost?.currency ?? null,
    },
  });
  // refused as any claim of a run that is not running is (409 naming its status)
  if (count === 0) await claimingRun(deps.db, runId, 'reports its ACP activity');
  return { runId };
}
