/**
 * Background work by id, whatever its kind: an agent run (the Run table), or a shell job or monitor (the Job table).
 * Apart from runs.ts and jobs.ts because it needs both, and runs.ts already stops a run's jobs through jobs.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Actor } from '../domain/actor';
import { AppError } from '../domain/errors';
import { permitOnRun } from '../access/authority';
import type { Deps } from '../runtime/deps';
import { requestJobStop } from './jobs';
import { stopRunForActor } from './runs';

/** Any background id to its kind; another company's id is not found. */
export async function resolveWork(deps: Deps, id: string, actor: Actor) {
  const companyOk = (companyId: string) =>
    actor.kind === 'admin' || ('companyId' in actor && actor.companyId === companyId);
  const run = await deps.db.run.findUnique({ where: { id } });
  if (run && companyOk(run.companyId)) return { kind: 'agent_run' as const, run };
  const job = await deps.db.job.findUnique({ where: { id } });
  if (job && companyOk(job.companyId)) return { kind: job.kind, job };
  throw new AppError('not_found', `no agent run, shell job or monitor with id ${id}`);
}

/** The one stop: an agent run, a shell job or a monitor, by its id; answers which kind it was. */
async function stopWork(deps: Deps, id: string, actor: Actor) {
  const work = await resolveWork(deps, id, actor);
  if (work.kind === 'agent_run') {
    await stopRunForActor(deps, id, actor);
    return work.kind;
  }
  permitOnRun(actor, 'run.stop', { id: work.job.ownerRunId, companyId: work.job.companyId });
  if (work.job.status !== 'running') throw new AppError('conflict', `${work.kind} ${id} is already ${work.job.status}`);
  await requestJobStop(deps, id, 'operator');
  return work.kind;
}

/**
 * Stops any background id and waits (bounded by the stop grace plus the SIGKILL settle) for the
 * workflow's verified result; `stop` is null when it is not in yet.
 */
export async function stopWorkVerified(deps: Deps, id: string, actor: Actor) {
  const kind = await stopWork(deps, id, actor);
  return { kind, id, stop: await verifiedStop(deps, kind === 'agent_run' ? 'run' : 'job', id) };
}

async function verifiedStop(deps: Deps, table: 'run' | 'job', id: string): Promise<unknown> {
  const deadline = Date.now() + deps.config.TREEWARDEN_STOP_GRACE_MS + 10_000;
  const select = { stopResult: true, status: true } as const;
  for (;;) {
    const row =
      table === 'run'
        ? await deps.db.run.findUnique({
            where: { id },
            select,
          })
        : await deps.db.job.findUnique({ where: { id }, select });
    if (row?.stopResult) return row.stopResult;
    // a queued run or an exited job had nothing to stop
    if (row && (row.status === 'cancelled' || row.status === 'exited'))
      return {
        verdict: 'terminal-clean',
        attempts: [],
        detail: 'nothing was running',
      };
    if (Date.now() > deadline) return null;
    await sleep(100);
  }
}
