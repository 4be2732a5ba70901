/**
 * One run's ACP supervision: start the agent, initialize, continue or open the session, record it, send the owed
 * prompt, journal the turn; on a stop, cancel the turn and leave a checkpoint only when its outcome is known.
 */
import { hostname } from 'node:os';
import {
  PROTOCOL_VERSION,
  type ClientConnection,
  type ContentBlock,
  type InitializeResponse,
  type PromptResponse,
} from '@agentclientprotocol/sdk';
import { ActivityReporter } from './activity';
import { describeExit, startAgent, within, type AgentChild } from './agent-child';
import { Terminals } from './terminals';
import { newClientState, supervisorClient } from './client';
import { agentEnvironment, EXIT, type SupervisorConfig } from './config';
import { Journal, readWake, writeFileAtomic } from './files';
import { claimOrRefuse } from './ledger';
import { messageQueued, nextMessagesPrompt } from './messages';
import { AgentGone, messageOf, openSession, StepFailed, type SessionOpener } from './open-session';
import { buildPrompt } from './prompt';
import {
  checkpointFor,
  planSession,
  previousSessionOf,
  sessionCapabilitiesOf,
  sessionRecord,
  type AcpSessionRef,
} from './session-rules';
import { stopVerdict, type SupervisorPhase, type TurnAnswer } from './stop-rules';

/** How long an answer the agent wrote before it exited may take to be read. */
const AGENT_EXIT_DRAIN_MS = 500;
/** How long the last activity report may hold up the exit (a stop's first layer is bounded). */
const LAST_REPORT_MS = 2_000;

export class RunSupervisor {
  private phase: SupervisorPhase = 'starting';
  private readonly state = newClientState();
  private readonly journal: Journal;
  private readonly child: AgentChild;
  /** the commands the agent ran through `terminal/*`: ended with it */
  private readonly terminals: Terminals;
  private readonly connection: ClientConnection;
  private ref: AcpSessionRef | null = null;
  private prompt: Promise<PromptResponse> | null = null;
  private stopping: Promise<number> | null = null;
  private finished = false;
  /** the turn under way was cancelled for a person's message (the `interrupt` policy) */
  private interrupted = false;
  /** the claim of queued messages under way, if any */
  private claiming: Promise<ContentBlock[] | null> | null = null;
  private readonly reporter: ActivityReporter;
  private stopRequested: () => void = () => undefined;
  private readonly stopRequest = new Promise<void>((resolve) => (this.stopRequested = resolve));

  constructor(
    private readonly cfg: SupervisorConfig,
    protectedPaths: ReadonlySet<string>,
  ) {
    this.journal = new Journal(cfg.journalFile);
    const env = agentEnvironment(process.env);
    this.child = startAgent(cfg.command, cfg.workspace, env);
    this.terminals = new Terminals(env);
    const settings = { workspace: cfg.workspace, unlocated: cfg.unlocated, protectedPaths, terminals: this.terminals };
    const app = supervisorClient(settings, this.state, this.journal);
    this.connection = app.connect(this.child.stream);
    this.reporter = new ActivityReporter(cfg.ledger, this.state.activity, cfg.reportEveryMs, this.journal);
    this.state.activityChanged = () => this.reporter.changed();
  }

  /** The whole run; resolves with the exit code once the agent has been ended. */
  async run(): Promise<number> {
    const turn = this.turn().catch((error: unknown) => this.failure(error));
    await Promise.race([turn, this.stopRequest]);
    // a stop's verdict wins over the turn's end: the turn was cancelled, or ended while the stop decided
    const code = this.stopping ? await this.stopping : await turn;
    // a claim the stop met in flight has returned what it took before the agent and this process go
    if (this.claiming) await within(this.claiming, LAST_REPORT_MS);
    this.finished = true;
    await within(this.reporter.flush(), LAST_REPORT_MS);
    const exit = await this.child.end(this.cfg.agentGraceMs);
    this.terminals.releaseAll();
    if (exit === null) this.say('the agent did not end after SIGKILL');
    this.connection.close();
    return code;
  }

  /** SIGTERM (or SIGINT): cancel the turn, decide, write the checkpoint when it is earned. Once. */
  requestStop(signal: string): void {
    if (this.finished || this.stopping) return;
    this.stopping = this.stop(signal);
    this.stopRequested();
  }

  /** The last resort of an unexpected exception: the agent is not left behind. */
  killAgentNow(): void {
    this.child.killNow();
  }

  private say(text: string): void {
    process.stderr.write(`treewarden-acp: ${text}\n`);
  }

  private async turn(): Promise<number> {
    const agent = this.connection.agent;
    const init = await this.step(
      'initialize',
      agent.request('initialize', {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
        clientInfo: { name: 'treewarden-acp-supervisor', version: '1' },
      }),
    );
    const version = (init as InitializeResponse | null)?.protocolVersion;
    if (version !== PROTOCOL_VERSION)
      throw new StepFailed(
        `the agent speaks ACP protocol version ${version}; this supervisor speaks ${PROTOCOL_VERSION}`,
      );
    const caps = sessionCapabilitiesOf(init);
    const agentInfo = init.agentInfo ? `${init.agentInfo.name} ${init.agentInfo.version}` : 'unnamed';
    this.journal.write({ kind: 'initialized', agent: agentInfo, ...caps });
    const wake = readWake(this.cfg.contextFile, this.cfg.capsuleFile);
    for (const problem of wake.problems) this.journal.write({ kind: 'run_file_problem', text: problem });
    const current = { cwd: this.cfg.workspace, command: this.cfg.command, host: hostname() };
    const opened = await openSession(this.opener(), planSession(previousSessionOf(wake.contextValue), current, caps));
    this.ref = { sessionId: opened.sessionId, ...current };
    // recorded before the first prompt: a session this run may have changed is never unknown
    const record = sessionRecord(this.ref, opened.origin, opened.fallback, this.cfg.runId, new Date());
    writeFileAtomic(this.cfg.sessionFile, `${JSON.stringify(record, null, 2)}\n`);
    this.journal.write({
      kind: 'session',
      event: opened.origin,
      sessionId: opened.sessionId,
      ...(opened.origin === 'loaded' ? { replayed: this.state.replayed } : {}),
    });
    this.phase = 'ready';
    const claimed = { sessionId: opened.sessionId, ...current, origin: opened.origin };
    if (this.cfg.ledger && !(await claimOrRefuse(this.cfg.ledger, claimed, this.journal, (t) => this.say(t))))
      return EXIT.sessionInUse;
    if (this.stopping) return EXIT.stopped; // never prompt once a stop is in
    const blocks = buildPrompt({
      issueId: this.cfg.issueId,
      wakeReason: this.cfg.wakeReason,
      runId: this.cfg.runId,
      workspace: this.cfg.workspace,
      context: wake.context,
      capsule: wake.capsule,
      origin: opened.origin,
      fallback: opened.fallback,
    });
    let stopReason = await this.promptTurn(opened.sessionId, blocks);
    // messages a person posted meanwhile: the next prompts of the same session, each once, after the turn ended or
    // was cancelled for them; the claim that finds none is the last (the run then takes no more)
    while ((stopReason === 'end_turn' || this.interrupted) && this.cfg.ledger && !this.stopping) {
      this.interrupted = false;
      this.claiming = nextMessagesPrompt(this.cfg.ledger, this.journal, () => this.stopping !== null);
      const next = await this.claiming;
      if (!next) break;
      stopReason = await this.promptTurn(opened.sessionId, next);
    }
    if (this.stopping) return this.stopping;
    if (stopReason === 'end_turn') return EXIT.endTurn;
    this.say(`the turn ended with stopReason ${JSON.stringify(stopReason)}, not end_turn`);
    return EXIT.otherStopReason;
  }

  private async promptTurn(sessionId: string, prompt: ContentBlock[]): Promise<unknown> {
    this.phase = 'prompting';
    const prompting = this.whileAgentLives(this.connection.agent.request('session/prompt', { sessionId, prompt }));
    this.prompt = prompting;
    if (this.cfg.messages === 'interrupt' && this.cfg.ledger)
      void messageQueued(this.cfg.ledger, this.cfg.messagePollMs, prompting).then((queued) => {
        if (queued) this.interruptTurn(sessionId);
      });
    const response = await prompting;
    this.phase = 'ended';
    if (!this.stopping) this.state.cancelling = false;
    const usage = (response as { usage?: unknown } | null)?.usage;
    this.state.activity.turnUsage(usage);
    this.reporter.changed();
    this.journal.write({
      kind: 'turn_end',
      stopReason: response?.stopReason,
      openToolCalls: this.state.tools.open(),
      ...(usage ? { usage } : {}),
    });
    return response?.stopReason;
  }

  /** A person's message is queued and the policy is `interrupt`: cancel the turn; the loop then prompts it. */
  private interruptTurn(sessionId: string): void {
    if (this.stopping || this.phase !== 'prompting') return;
    this.interrupted = true;
    this.state.cancelling = true;
    this.journal.write({ kind: 'interrupt', text: 'a message is queued: the turn is cancelled for it' });
    this.agentNotifyCancel(sessionId);
  }

  /**
   * `request`, or a failure naming the agent's exit once it has gone (after a moment for the answer it may have
   * written before it went: stdout can be read after the exit is seen).
   */
  private whileAgentLives<T>(request: Promise<T>): Promise<T> {
    const gone = this.child.exited.then(async (exit) => {
      await new Promise((resolve) => setTimeout(resolve, AGENT_EXIT_DRAIN_MS));
      throw new AgentGone(`the agent ${describeExit(exit)}`);
    });
    gone.catch(() => undefined); // only the race's loser when the request settles first
    return Promise.race([request, gone]);
  }

  private opener(): SessionOpener {
    const { connection, state, journal } = this;
    return { connection, state, journal, workspace: this.cfg.workspace, step: (name, r) => this.step(name, r) };
  }

  /** A start-up request, bounded by TREEWARDEN_ACP_START_TIMEOUT_MS. */
  private async step<T>(name: string, request: Promise<T>): Promise<T> {
    const answered = await within(
      this.whileAgentLives(request).then((value) => ({ value })),
      this.cfg.startTimeoutMs,
    );
    if (!answered) throw new StepFailed(`the agent did not answer ${name} within ${this.cfg.startTimeoutMs} ms`);
    return answered.value;
  }

  private async failure(error: unknown): Promise<number> {
    if (this.stopping) return this.stopping; // the stop explains it
    const exit = this.child.status() ?? (await within(this.child.exited, 1_000));
    const text =
      exit && !(error instanceof StepFailed) && !(error instanceof AgentGone)
        ? `the agent ${describeExit(exit)} (${this.phase}: ${messageOf(error)})`
        : `${this.phase}: ${messageOf(error)}`;
    this.journal.write({ kind: 'failed', phase: this.phase, text });
    this.say(text);
    return EXIT.agentFailed;
  }

  private async cancelTurn(): Promise<TurnAnswer> {
    if (!this.prompt) return { kind: 'not_prompted' };
    if (this.phase === 'prompting' && this.ref) {
      this.state.cancelling = true;
      this.agentNotifyCancel(this.ref.sessionId);
    }
    const settled = this.prompt.then(
      (r): TurnAnswer =>
        typeof r?.stopReason === 'string'
          ? { kind: 'stopped', stopReason: r.stopReason }
          : { kind: 'failed', error: 'the prompt was answered without a stopReason' },
      (error: unknown): TurnAnswer => ({ kind: 'failed', error: messageOf(error) }),
    );
    return (await within(settled, this.cfg.cancelWaitMs)) ?? { kind: 'no_answer', waitedMs: this.cfg.cancelWaitMs };
  }

  private agentNotifyCancel(sessionId: string): void {
    this.connection.agent.notify('session/cancel', { sessionId }).catch((error: unknown) => {
      this.journal.write({ kind: 'cancel_unsent', text: messageOf(error) });
    });
  }

  private async stop(signal: string): Promise<number> {
    this.journal.write({ kind: 'stop_requested', signal, phase: this.phase });
    let answer = await this.cancelTurn();
    if (answer.kind === 'failed') {
      const exit = this.child.status() ?? (await within(this.child.exited, 500));
      if (exit) answer = { kind: 'failed', error: `${answer.error}: the agent ${describeExit(exit)}` };
    }
    const openToolCalls = this.state.tools.open();
    const verdict = stopVerdict({ phase: this.phase, answer, openToolCalls });
    const checkpoint = verdict.checkpoint && this.ref !== null && this.writeCheckpoint(this.ref);
    this.journal.write({
      kind: 'stop',
      acknowledged: verdict.acknowledged,
      checkpoint,
      openToolCalls,
      text: verdict.reason,
    });
    this.say(`stopped by ${signal}: ${verdict.reason}; ${checkpoint ? 'checkpoint written' : 'no checkpoint'}`);
    return checkpoint ? EXIT.stoppedPreserved : EXIT.stopped;
  }

  private writeCheckpoint(ref: AcpSessionRef): boolean {
    if (!this.cfg.checkpointFile) {
      this.say('TREEWARDEN_CHECKPOINT_FILE is not set: the session cannot be offered for continuation');
      return false;
    }
    try {
      writeFileAtomic(this.cfg.checkpointFile, JSON.stringify(checkpointFor(ref)));
      return true;
    } catch (error) {
      this.say(`cannot write the checkpoint: ${messageOf(error)}`);
      return false;
    }
  }
}
