/** Orchestrator on a real Temporal client: readable ids, search attributes, memo, summaries. */
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import type { Config } from '../domain/config';
import { workflowId } from '../domain/ids';
import { CompanyIdKey, KindKey, StateKey } from '../domain/search-attributes';
import { holdNotActive, isHoldNotActive } from '../domain/hold-contract';
import type { hostProbeWorkflow, taskWatchdogWorkflow, treeHoldWorkflow, webhookDeliveryWorkflow } from '../workflows';
import {
  awaitPauseAppliedUpdate,
  companyCapFreedSignal,
  releaseHoldUpdate,
  subtreeChangedSignal,
  watchdogRecoverySignal,
  watchdogRemovedSignal,
  type SubtreeChange,
} from '../workflows/definitions';
import { coalescePerKey } from './coalesce';
import { createRecoveryEntitySignals } from './recovery-entity-signals';
import { attributes, fairly, ignore } from './start-options';
import { sendUntilProcessed } from './unprocessed-update';
import type { HoldStart, Orchestrator, RunStart, WatchdogStart } from './orchestrator';

export function createTemporalOrchestrator(client: Client, config: Config): Orchestrator {
  const taskQueue = config.TREEWARDEN_TASK_QUEUE;
  /** The hold's workflow, started once: a second start (the pause's own, the hold dispatcher's) finds it running. */
  const launchHold = async (hold: HoldStart): Promise<void> => {
    await client.workflow
      .start<typeof treeHoldWorkflow>('treeHoldWorkflow', {
        workflowId: workflowId.treeHold(hold.holdId),
        taskQueue,
        args: [
          {
            holdId: hold.holdId,
            companyId: hold.companyId,
            heartbeatTimeoutMs: config.TREEWARDEN_HEARTBEAT_TIMEOUT_MS,
            maximumResumeRetries: config.TREEWARDEN_HOLD_RESUME_RETRIES,
          },
        ],
        typedSearchAttributes: attributes('tree_hold', hold.companyId, hold.rootIssueId, 'applying'),
        memo: { issueTitle: hold.title },
        staticSummary: `Tree hold on "${hold.title}"`,
        // an operator's brake goes ahead of the work it brakes: the pause, the release and its fan-out (the runs it
        // resumes run at run priority)
        ...fairly(hold.companyId, 'stop'),
      })
      .catch(ignore(WorkflowExecutionAlreadyStartedError));
  };
  type RunLikeType = 'agentRunWorkflow' | 'backgroundJobWorkflow' | 'blockerResolutionWorkflow';
  type RunLikeMeta = {
    kind: string;
    state: string;
    summary: string;
    companyId: string;
    issueId: string;
    title: string;
  };
  /** The start options of a run-like workflow, whether it starts alone or with a signal. */
  const runLikeStart = (id: string, input: Record<string, string | number | null>, meta: RunLikeMeta) => ({
    workflowId: id,
    taskQueue,
    args: [{ ...input, heartbeatTimeoutMs: config.TREEWARDEN_HEARTBEAT_TIMEOUT_MS }],
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    typedSearchAttributes: attributes(meta.kind, meta.companyId, meta.issueId, meta.state),
    memo: { issueTitle: meta.title },
    staticSummary: meta.summary,
    ...fairly(meta.companyId, 'run'),
  });
  /** Starts a run-like workflow once: a duplicate start (a retried dispatch) is not an error. */
  const startOnce = async (
    type: RunLikeType,
    id: string,
    input: Record<string, string | number | null>,
    meta: RunLikeMeta,
  ) => {
    await client.workflow
      .start(type, runLikeStart(id, input, meta))
      .catch(ignore(WorkflowExecutionAlreadyStartedError));
  };
  const agentRun = (run: RunStart) =>
    [
      workflowId.agentRun(run.runId),
      { runId: run.runId, adoptionWindowMs: config.TREEWARDEN_ADOPTION_WINDOW_MS },
      { kind: 'agent_run', state: 'queued', summary: `Agent run for "${run.title}"`, ...run },
    ] as const;
  /** Signal-with-start of a watchdog's workflow: one signal, or a start with it when the workflow is missing. */
  const signalWatchdog = async (
    watchdog: WatchdogStart,
    signal: typeof subtreeChangedSignal | typeof watchdogRecoverySignal,
    signalArgs: [SubtreeChange],
  ) => {
    await client.workflow.signalWithStart<typeof taskWatchdogWorkflow, [SubtreeChange]>('taskWatchdogWorkflow', {
      workflowId: workflowId.taskWatchdog(watchdog.issueId),
      taskQueue,
      args: [
        {
          watchdogId: watchdog.watchdogId,
          issueId: watchdog.issueId,
          tickMs: config.TREEWARDEN_WATCHDOG_TICK_MS,
          debounceMs: config.TREEWARDEN_WATCHDOG_DEBOUNCE_MS,
          heartbeatTimeoutMs: config.TREEWARDEN_HEARTBEAT_TIMEOUT_MS,
        },
      ],
      signal,
      signalArgs,
      typedSearchAttributes: attributes('task_watchdog', watchdog.companyId, watchdog.issueId, 'starting'),
      memo: { issueTitle: watchdog.title },
      staticSummary: `Task watchdog for "${watchdog.title}"`,
      ...fairly(watchdog.companyId, 'evaluation'),
    });
  };
  // A change signal only says "evaluate again": while one is in flight, a burst of changes under
  // one watchdog shares a single follow-up signal (1,000 API writes, a handful of history events).
  // Recovery pings are not coalesced with changes: a shared follow-up must never be the no-op kind.
  const subtreeChanged = coalescePerKey<Parameters<Orchestrator['subtreeChanged']>>(
    (watchdog, reason) => signalWatchdog(watchdog, subtreeChangedSignal, [{ watchdogId: watchdog.watchdogId, reason }]),
    (watchdog) => `${watchdog.issueId}:${watchdog.watchdogId}`,
  );
  return {
    async startRun(run) {
      await startOnce('agentRunWorkflow', ...agentRun(run));
    },
    async companyCapFreed(waiting) {
      if (waiting.kind === 'hold') {
        await client.workflow
          .getHandle(workflowId.treeHold(waiting.id))
          .signal(companyCapFreedSignal)
          .catch(ignore(WorkflowNotFoundError));
        return;
      }
      // a run deferred at its company's cap has no workflow yet: the slot starts it (a closed one stays closed)
      await client.workflow
        .signalWithStart('agentRunWorkflow', {
          ...runLikeStart(...agentRun(waiting.run)),
          signal: companyCapFreedSignal,
        })
        .catch(ignore(WorkflowExecutionAlreadyStartedError));
    },
    async startJob(job) {
      await startOnce(
        'backgroundJobWorkflow',
        workflowId.backgroundJob(job.jobId),
        { jobId: job.jobId, hostId: job.hostId, adoptionWindowMs: config.TREEWARDEN_ADOPTION_WINDOW_MS },
        { kind: 'background_job', state: 'running', summary: job.title, ...job },
      );
    },
    async startBlockerResolution(resolution) {
      await startOnce(
        'blockerResolutionWorkflow',
        workflowId.blockerResolution(resolution.blockerId),
        { blockerId: resolution.blockerId },
        {
          kind: 'execution_blocker',
          state: 'resolved',
          summary: `Resume after reconciling "${resolution.title}"`,
          ...resolution,
        },
      );
    },
    async startWebhookDelivery({ deliveryId, companyId, summary }) {
      await client.workflow
        .start<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
          workflowId: workflowId.webhookDelivery(deliveryId),
          taskQueue,
          args: [
            {
              deliveryId,
              attemptTimeoutMs: config.TREEWARDEN_WEBHOOK_TIMEOUT_MS,
              retryInitialMs: config.TREEWARDEN_WEBHOOK_RETRY_INITIAL_MS,
              retryMaxMs: config.TREEWARDEN_WEBHOOK_RETRY_MAX_MS,
              giveUpMs: config.TREEWARDEN_WEBHOOK_GIVE_UP_MS,
              heartbeatTimeoutMs: config.TREEWARDEN_HEARTBEAT_TIMEOUT_MS,
            },
          ],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          typedSearchAttributes: [
            { key: KindKey, value: 'webhook_delivery' },
            { key: CompanyIdKey, value: companyId },
            { key: StateKey, value: 'pending' },
          ],
          staticSummary: summary,
          ...fairly(companyId, 'delivery'),
        })
        .catch(ignore(WorkflowExecutionAlreadyStartedError));
    },
    async cancelJob(jobId) {
      await client.workflow.getHandle(workflowId.backgroundJob(jobId)).cancel().catch(ignore(WorkflowNotFoundError));
    },
    async cancelRun(runId) {
      await client.workflow.getHandle(workflowId.agentRun(runId)).cancel().catch(ignore(WorkflowNotFoundError));
    },
    async isWorkflowOpen(id) {
      try {
        return (await client.workflow.getHandle(id).describe()).status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
    async probeHost(hostId, request) {
      return client.workflow.execute<typeof hostProbeWorkflow>('hostProbeWorkflow', {
        workflowId: workflowId.hostProbe(hostId),
        taskQueue,
        args: [{ hostId, waitForHostMs: config.TREEWARDEN_HEARTBEAT_TIMEOUT_MS, ...request }],
        // bounded even if no worker of the shared queue answers: inspection must not hang
        workflowExecutionTimeout: config.TREEWARDEN_HEARTBEAT_TIMEOUT_MS + 30_000,
        staticSummary: `Inspect processes on host ${hostId}`,
      });
    },
    subtreeChanged,
    ...createRecoveryEntitySignals(client, config),
    async recoverWatchdog(watchdog) {
      await signalWatchdog(watchdog, watchdogRecoverySignal, [
        { watchdogId: watchdog.watchdogId, reason: 'worker_recovery' },
      ]);
    },
    async watchdogRemoved(issueId, watchdogId) {
      await client.workflow
        .getHandle(workflowId.taskWatchdog(issueId))
        .signal(watchdogRemovedSignal, { watchdogId })
        .catch(ignore(WorkflowNotFoundError));
    },
    launchHold,
    async startHold(hold) {
      await launchHold(hold);
      const handle = client.workflow.getHandle(workflowId.treeHold(hold.holdId));
      return sendUntilProcessed(randomUUID(), (updateId) =>
        handle.executeUpdate(awaitPauseAppliedUpdate, { updateId }),
      );
    },
    async releaseHold({ holdId, ...release }) {
      try {
        const handle = client.workflow.getHandle(workflowId.treeHold(holdId));
        // the release id stays the one the database's compare-and-set is tagged with: an unread update never ran
        return await sendUntilProcessed(release.releaseId, (updateId) =>
          handle.executeUpdate(releaseHoldUpdate, { args: [release], updateId }),
        );
      } catch (error) {
        // the validator's refusal, or a workflow that completed after its release
        if (error instanceof WorkflowUpdateFailedError && isHoldNotActive(error.cause)) throw error.cause;
        if (error instanceof WorkflowNotFoundError) throw holdNotActive(holdId);
        throw error;
      }
    },
  };
}
