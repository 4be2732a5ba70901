/**
 * The client side of ACP as the supervisor serves it: `session/update` journaled and tool calls tracked,
 * `session/request_permission` answered by the policy (acp/permission.ts), `fs/*` confined to the workspace
 * (acp/paths.ts), `terminal/*` served inside the workspace as the supervisor's children (acp/terminals.ts).
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { client, methods, RequestError, type ClientApp } from '@agentclientprotocol/sdk';
import { ActivityLog } from './activity';
import type { Journal } from './files';
import { updateFields, ToolCalls } from './journal-lines';
import { confinePath, type Access } from './paths';
import { decidePermission, type UnlocatedPolicy } from './permission';
import { TooManyTerminals, UnknownTerminal, type Terminals } from './terminals';

/** What the handlers share with the supervisor's main path. */
export interface ClientState {
  /** the session being loaded or in use; requests naming another are refused */
  sessionId: string | null;
  /** `session/load` replays history: counted, not journaled again, not tracked as tool calls */
  loading: boolean;
  replayed: number;
  cancelling: boolean;
  tools: ToolCalls;
  /** what the run shows (acp/activity.ts): folded from the same updates and answers, reported when changed */
  activity: ActivityLog;
  activityChanged: () => void;
}

export interface ClientSettings {
  workspace: string;
  unlocated: UnlocatedPolicy;
  /** treewarden's files the protocol must not write (real paths) */
  protectedPaths: ReadonlySet<string>;
  terminals: Terminals;
}

export const newClientState = (): ClientState => ({
  sessionId: null,
  loading: false,
  replayed: 0,
  cancelling: false,
  tools: new ToolCalls(),
  activity: new ActivityLog(),
  activityChanged: () => undefined,
});

/** A file served by `fs/read_text_file` is at most this large. */
export const READ_MAX_BYTES = 8 * 1024 * 1024;

const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
const RESOURCE_NOT_FOUND = -32002;

/** Lines `line` (1-based) onwards, at most `limit` of them, as ACP's read asks. */
export function linesOf(text: string, line?: number | null, limit?: number | null): string {
  if (!line && !limit) return text;
  const lines = text.split('\n');
  const start = Math.max(0, (line ?? 1) - 1);
  return lines.slice(start, limit ? start + limit : undefined).join('\n');
}

export function supervisorClient(settings: ClientSettings, state: ClientState, journal: Journal): ClientApp {
  const relative = (p: string) => path.relative(settings.workspace, p) || '.';
  const checkSession = (sessionId: string, method: string) => {
    if (state.sessionId === null || sessionId !== state.sessionId) {
      journal.write({ kind: 'refused', method, text: `session ${sessionId} is not this run's` });
      throw RequestError.sessionNotFound(sessionId);
    }
  };
  const confined = (requested: string, access: Access, method: string) => {
    const c = confinePath(settings.workspace, requested, access, settings.protectedPaths);
    if (c.ok) return c.path;
    journal.write({ kind: 'fs_refused', method, problem: c.problem, path: requested, text: c.message });
    throw new RequestError(c.problem === 'not_found' ? RESOURCE_NOT_FOUND : INVALID_PARAMS, c.message, {
      path: requested,
      problem: c.problem,
    });
  };
  /** an I/O error of an allowed path, as a request error the agent can read (not an internal error) */
  const failed = (method: string, requested: string, error: unknown): never => {
    if (error instanceof RequestError) throw error;
    const message = `cannot ${method === methods.client.fs.readTextFile ? 'read' : 'write'} ${requested}: ${error}`;
    journal.write({ kind: 'fs_failed', method, path: requested, text: message });
    throw new RequestError(INVALID_PARAMS, message, { path: requested });
  };
  const app = client({ name: 'treewarden-acp-supervisor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      if (state.sessionId !== null && params.sessionId !== state.sessionId) return;
      if (state.loading) {
        state.replayed++;
        return;
      }
      state.tools.observe(params.update);
      journal.write(updateFields(params.update));
      state.activity.observe(params.update);
      state.activityChanged();
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      checkSession(params.sessionId, methods.client.session.requestPermission);
      const decided = decidePermission({
        options: params.options,
        locations: params.toolCall.locations?.map((l) => l.path) ?? null,
        inside: (location) => confinePath(settings.workspace, location, 'write').ok,
        cancelling: state.cancelling,
        unlocated: settings.unlocated,
      });
      journal.write({
        kind: 'permission',
        toolCallId: params.toolCall.toolCallId,
        decision: decided.decision,
        optionId: decided.optionId,
        text: decided.reason,
      });
      state.activity.permission({
        toolCallId: params.toolCall.toolCallId,
        title: params.toolCall.title ?? null,
        locations: params.toolCall.locations?.map((l) => l.path) ?? [],
        decision: decided.decision,
        optionId: decided.optionId,
        reason: decided.reason,
      });
      state.activityChanged();
      return decided.response;
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      checkSession(params.sessionId, methods.client.fs.readTextFile);
      const real = confined(params.path, 'read', methods.client.fs.readTextFile);
      try {
        // O_NOFOLLOW: the path was resolved; a symlink swapped in since is not followed
        const fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW);
        try {
          const size = fstatSync(fd).size;
          if (size > READ_MAX_BYTES)
            throw new RequestError(
              INVALID_PARAMS,
              `${params.path} is ${size} bytes: over the ${READ_MAX_BYTES} served`,
            );
          const content = linesOf(readFileSync(fd, 'utf8'), params.line, params.limit);
          journal.write({ kind: 'fs', method: methods.client.fs.readTextFile, path: relative(real) });
          return { content };
        } finally {
          closeSync(fd);
        }
      } catch (error) {
        return failed(methods.client.fs.readTextFile, params.path, error);
      }
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      checkSession(params.sessionId, methods.client.fs.writeTextFile);
      const real = confined(params.path, 'write', methods.client.fs.writeTextFile);
      try {
        mkdirSync(path.dirname(real), { recursive: true });
        const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
        const fd = openSync(real, flags, 0o644);
        try {
          writeFileSync(fd, params.content);
        } finally {
          closeSync(fd);
        }
      } catch (error) {
        return failed(methods.client.fs.writeTextFile, params.path, error);
      }
      journal.write({ kind: 'fs', method: methods.client.fs.writeTextFile, path: relative(real) });
      return {};
    });
  serveTerminals(app, settings, (sessionId, method) => checkSession(sessionId, method), confined, journal);
  return app;
}

/**
 * `terminal/*`: a command in the workspace (its `cwd` confined like a read), answered by acp/terminals.ts; a terminal
 * that is not this run's, or one too many, is a request error the agent can read.
 */
function serveTerminals(
  app: ClientApp,
  settings: ClientSettings,
  checkSession: (sessionId: string, method: string) => void,
  confined: (requested: string, access: Access, method: string) => string,
  journal: Journal,
): void {
  const { terminal } = methods.client;
  const answer = <T>(method: string, sessionId: string, work: () => T): T => {
    checkSession(sessionId, method);
    try {
      return work();
    } catch (error) {
      if (!(error instanceof UnknownTerminal || error instanceof TooManyTerminals)) throw error;
      journal.write({ kind: 'refused', method, text: error.message });
      throw new RequestError(INVALID_PARAMS, error.message);
    }
  };
  app
    .onRequest(terminal.create, ({ params }) =>
      answer(terminal.create, params.sessionId, () => {
        const cwd = params.cwd ? confined(params.cwd, 'read', terminal.create) : settings.workspace;
        const args = params.args ?? [];
        const terminalId = settings.terminals.create(
          params.command,
          args,
          cwd,
          params.env ?? [],
          params.outputByteLimit,
        );
        journal.write({ kind: 'terminal', terminalId, text: [params.command, ...args].join(' ') });
        return { terminalId };
      }),
    )
    .onRequest(terminal.output, ({ params }) =>
      answer(terminal.output, params.sessionId, () => settings.terminals.output(params.terminalId)),
    )
    .onRequest(terminal.waitForExit, ({ params }) =>
      answer(terminal.waitForExit, params.sessionId, () => settings.terminals.waitForExit(params.terminalId)),
    )
    .onRequest(terminal.kill, ({ params }) =>
      answer(terminal.kill, params.sessionId, () => {
        settings.terminals.kill(params.terminalId);
        return {};
      }),
    )
    .onRequest(terminal.release, ({ params }) =>
      answer(terminal.release, params.sessionId, () => {
        settings.terminals.release(params.terminalId);
        return {};
      }),
    );
}
