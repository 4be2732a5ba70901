/**
 * @module Run supervision (seed 003's regression tests, on Linux): one ownership graph for a run,
 * its process tree and the monitors it starts; verified stops; distinct verdicts; findings once.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ownedProcesses } from '../processes/process-table';
import { hostPidOf } from './support/ns-pid';
import { REPO_ROOT } from '../testing/stack';
import { eventually, runRow, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    TREEWARDEN_SUPERVISE_EVERY_MS: '200',
    // wide enough that a loaded host's pause between a live agent's API calls (each through its sandbox's relay)
    // never looks like silence; a silent run still turns critical in seconds
    TREEWARDEN_SILENT_SUSPICIOUS_MS: '3000',
    TREEWARDEN_SILENT_CRITICAL_MS: '6000',
    TREEWARDEN_SILENT_CONTINUE_REARM_MS: '2000',
    TREEWARDEN_STOP_GRACE_MS: '1000',
  });
});
afterAll(async () => {
  await h?.close();
});

type Company = Awaited<ReturnType<typeof seedCompany>>;
const inspect = async (c: Company, id: string) => {
  const r = await h.request('GET', `/api/work/${id}/inspect`, c.token);
  expect(r.status).toBe(200);
  return r.body;
};
const findings = (runId: string) => h.services.db.finding.findMany({ where: { runId } });

function shellCommand(shell: string, line: string, env: Record<string, string>) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(shell, ['-c', line], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** A company, an agent running `script` under sh, an issue assigned to it, and its first run. */
async function startRun(script: string, options: { cwd?: string; c?: Company; issueId?: string } = {}) {
  const c = options.c ?? (await seedCompany(h));
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: ['-c', script],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const issueId = options.issueId ?? (await c.issue({ title: 'supervised', assigneeAgentId: agent.id })).id;
  if (options.issueId) await h.request('PATCH', `/api/issues/${issueId}`, c.token, { assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issueId}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  return { c, issueId, runId: wake.body.runId as string };
}

const running = (runId: string) =>
  eventually('run has its process group', async () => (await runRow(h, runId)).processGroupId !== null);
/** Resolves once a supervision tick has graded the run at least `ms` after its start (the tick writes its lease). */
const gradedAfter = (runId: string, ms: number) =>
  eventually(`a supervision tick ${ms} ms into run ${runId}`, async () => {
    const { startedAt, leaseRenewedAt } = await runRow(h, runId);
    return startedAt && leaseRenewedAt && leaseRenewedAt.getTime() - startedAt.getTime() >= ms ? leaseRenewedAt : null;
  });
/** Resolves once `count` more supervision ticks have graded the run (each renews the lease after its grade). */
async function supervisionTicks(runId: string, count: number) {
  const renewedAt = async () => (await runRow(h, runId)).leaseRenewedAt?.getTime() ?? 0;
  for (let i = 0; i < count; i++) {
    const before = await renewedAt();
    await eventually('the next supervision tick', async () => (await renewedAt()) > before);
  }
}
const aliveOwnedBy = async (runId: string) => {
  const run = await runRow(h, runId);
  return ownedProcesses({ ownerToken: run.ownerToken, processGroupId: run.processGroupId });
};

/** The run's `sleep 120` processes: started once the agent's script has set everything up (its traps included). */
const sleepsOf = async (runId: string) => (await aliveOwnedBy(runId)).filter((p) => p.command === 'sleep 120').length;

describe('liveness', () => {
  test('a run with empty output that keeps calling the API is live, not silent', async () => {
    const post =
      'curl -sf -X POST -H "authorization: Bearer $TREEWARDEN_RUN_TOKEN" -H "content-type: application/json" -d \'{"body":"working"}\' "$TREEWARDEN_API_URL/api/issues/$TREEWARDEN_ISSUE_ID/comments" > /dev/null';
    const { c, runId } = await startRun(`for i in $(seq 40); do ${post}; sleep 0.25; done`);
    await running(runId);
    await gradedAfter(runId, 6500); // past the critical threshold
    await supervisionTicks(runId, 1); // and that tick's findings are written
    const view = await inspect(c, runId);
    expect(statSync(view.output.path).size).toBe(0); // nothing was ever written to the output
    expect(view).toMatchObject({ verdict: 'live-running', silence: { state: 'ok' } });
    expect((await findings(runId)).filter((f) => f.verdict === 'silent-running')).toHaveLength(0);
  });

  test('a run pulsing its progress journal is live, not silent', async () => {
    const { c, runId } = await startRun(
      'for i in $(seq 40); do echo step >> "$TREEWARDEN_JOURNAL_FILE"; sleep 0.25; done',
    );
    await running(runId);
    await gradedAfter(runId, 6500);
    await supervisionTicks(runId, 1);
    const view = await inspect(c, runId);
    expect(view.verdict).toBe('live-running');
    expect(view.journal.lastPulseAt).not.toBeNull();
  });

  test('a silent run becomes suspicious, then critical, is never stopped for it, and each finding is emitted once', async () => {
    const { c, runId, issueId } = await startRun('sleep 30');
    await running(runId);
    await eventually('critical', async () => (await runRow(h, runId)).silentState === 'critical');
    for (let i = 0; i < 5; i++) expect((await inspect(c, runId)).verdict).toBe('silent-running');
    await supervisionTicks(runId, 5); // several more supervision ticks of the same state
    const silent = (await findings(runId)).filter((f) => f.verdict === 'silent-running');
    expect(silent.map((f) => (f.details as { level: string }).level).sort()).toEqual(['critical', 'suspicious']);
    // information only: still running, no new wake, no new issue
    expect((await runRow(h, runId)).status).toBe('running');
    expect(await h.services.db.wakeRequest.count({ where: { issueId } })).toBe(1);
    expect(await h.services.db.issue.count({ where: { companyId: c.companyId } })).toBe(1);

    const decide = (decision: string) => h.request('POST', `/api/runs/${runId}/silence`, c.token, { decision });
    expect((await decide('continue')).body).toMatchObject({ silentState: 'ok', decision: 'continue' });
    expect((await inspect(c, runId)).verdict).toBe('live-running');
    await eventually('continue re-arms', async () => (await runRow(h, runId)).silentState !== 'ok');
    expect((await decide('dismiss')).status).toBe(200);
    await supervisionTicks(runId, 5); // each would grade it critical again without the dismissal
    expect((await runRow(h, runId)).silentState).toBe('ok');
    expect((await h.request('POST', `/api/runs/${runId}/silence`, c.token, { decision: 'ignore' })).status).toBe(400);
    await h.request('POST', `/api/work/${runId}/stop`, c.token);
  });
});

describe('verified stops', () => {
  test('a child that left the group with setsid and ignores SIGTERM makes the stop stop-partial, then clean after SIGKILL', async () => {
    // the agent waits for its children on SIGTERM: in the sandbox, an agent that exits takes what it left with it
    const { c, runId } = await startRun(
      'setsid sh -c \'trap "" TERM; sleep 120; :\' & trap wait TERM; sleep 120 & wait',
    );
    await running(runId);
    await eventually('the detached child is running', async () => (await sleepsOf(runId)) === 2);
    const stop = await h.request('POST', `/api/work/${runId}/stop`, c.token);
    expect(stop.status).toBe(200);
    expect(stop.body.kind).toBe('agent_run');
    const [term, kill] = stop.body.stop.attempts;
    expect(term).toMatchObject({ signal: 'SIGTERM', verdict: 'stop-partial' });
    expect(term.survivors.length).toBeGreaterThanOrEqual(1);
    expect(term.survivors.every((s: { pgid: number }) => s.pgid !== 0)).toBe(true);
    expect(kill).toMatchObject({ signal: 'SIGKILL', verdict: 'terminal-clean', survivors: [] });
    expect(stop.body.stop.verdict).toBe('terminal-clean');
    expect(await aliveOwnedBy(runId)).toEqual([]);
    const partial = (await findings(runId)).filter((f) => f.verdict === 'stop-partial');
    expect(partial).toHaveLength(1);
    expect((await settled(h, runId)).status).toBe('cancelled');
    const run = await h.request('GET', `/api/runs/${runId}`, c.token);
    expect(run.body.stopResult.attempts.map((a: { verdict: string }) => a.verdict)).toEqual([
      'stop-partial',
      'terminal-clean',
    ]);
  });

  test('a double-forked grandchild ignoring SIGTERM is found and killed too', async () => {
    // the agent is slow to wind down: in the sandbox, an agent that exits takes what it left with it
    const { c, runId } = await startRun(
      '(sh -c \'trap "" TERM; exec sleep 120\' &) ; trap "sleep 60" TERM; sleep 120 & wait',
    );
    await running(runId);
    await eventually('the grandchild is running', async () => (await sleepsOf(runId)) === 2);
    const stop = await h.request('POST', `/api/work/${runId}/stop`, c.token);
    expect(stop.body.stop.attempts.map((a: { verdict: string }) => a.verdict)).toEqual([
      'stop-partial',
      'terminal-clean',
    ]);
    expect(await aliveOwnedBy(runId)).toEqual([]);
  });

  test('a whole detached process tree dies on stop', async () => {
    const { c, runId } = await startRun("setsid sh -c 'sleep 120 & sleep 120 & wait' & sleep 120");
    await running(runId);
    await eventually('the detached tree is running', async () => (await sleepsOf(runId)) === 3);
    const stop = await h.request('POST', `/api/work/${runId}/stop`, c.token);
    expect(stop.body.stop).toMatchObject({ verdict: 'terminal-clean' });
    expect(await aliveOwnedBy(runId)).toEqual([]);
  });

  test('inspection lists the run processes by owner token and never a decoy naming the token, nor itself', async () => {
    const child = join(mkdtempSync(join(tmpdir(), 'tw-inspect-')), 'child.pid');
    const { c, runId } = await startRun(`sleep 60 & echo $! > ${child}; wait`);
    await running(runId);
    const run = await runRow(h, runId);
    const ownerToken = run.ownerToken!;
    // the agent sees its sandbox's PID namespace: its `$!` is the child's pid there, the last of its NSpid
    const childPid = await eventually('the run wrote its child pid', async () => {
      const nsPid = existsSync(child) ? Number(readFileSync(child, 'utf8').trim()) : 0;
      return nsPid
        ? hostPidOf(
            nsPid,
            (await aliveOwnedBy(runId)).map((p) => p.pid),
          )
        : null;
    });
    // a process that is not the run's but carries its token on the command line
    const decoy = spawn('sh', ['-c', 'sleep 60', ownerToken], { stdio: 'ignore' });
    try {
      const view = await inspect(c, runId);
      const pids = view.processTree.processes.map((p: { pid: number }) => p.pid);
      expect(view.processTree.visible).toBe(true);
      expect(pids).toEqual(expect.arrayContaining([run.processGroupId, childPid]));
      expect(pids).not.toContain(decoy.pid);
      expect(JSON.stringify(view)).not.toContain(ownerToken);
      // an inspector whose environment carries the run's owner token, like its parent shell: the
      // token would match both, and the self-exclusion must keep both out while the run's processes stay in
      const owner = JSON.stringify({ ownerToken, processGroupId: run.processGroupId });
      const script = join(REPO_ROOT, 'test/support/inspect-as-owner.ts');
      const looked = await shellCommand('sh', `"${process.execPath}" --import tsx "${script}" '${owner}'; exit $?`, {
        TREEWARDEN_OWNER_TOKEN: ownerToken,
      });
      expect(looked).toMatchObject({ status: 0, stderr: '' });
      const answer = JSON.parse(looked.stdout) as {
        self: number;
        parent: number;
        found: { pid: number; ppid: number }[];
      };
      const found = answer.found.map((p) => p.pid);
      expect(found).toEqual(expect.arrayContaining([run.processGroupId, childPid]));
      expect(found).not.toContain(answer.self);
      expect(found).not.toContain(answer.parent);
      expect(found).not.toContain(decoy.pid);
      // apart from the inspector's own children (its environment is theirs), exactly what the inspection lists
      const others = answer.found.filter((p) => p.ppid !== answer.self).map((p) => p.pid);
      expect(others.sort()).toEqual([...pids].sort());
    } finally {
      decoy.kill('SIGKILL');
      rmSync(dirname(child), { recursive: true, force: true });
    }
    await h.request('POST', `/api/work/${runId}/stop`, c.token);
  });
});

describe('monitors and the registry', () => {
  test('the unified stop accepts a monitor id; the owner run keeps running', async () => {
    const { c, runId } = await startRun('sleep 60');
    await running(runId);
    const monitor = await h.request('POST', `/api/runs/${runId}/jobs`, c.token, {
      kind: 'monitor',
      command: 'sh',
      args: ['-c', 'tail -F /dev/null'],
    });
    expect(monitor.status).toBe(201);
    await eventually(
      'monitor running',
      async () =>
        (await h.services.db.job.findUniqueOrThrow({ where: { id: monitor.body.id } })).processGroupId !== null,
    );
    const stop = await h.request('POST', `/api/work/${monitor.body.id}/stop`, c.token);
    expect(stop.status).toBe(200);
    expect(stop.body).toMatchObject({ kind: 'monitor', stop: { verdict: 'terminal-clean' } });
    const job = await eventually('monitor settled', async () => {
      const row = await h.services.db.job.findUniqueOrThrow({ where: { id: monitor.body.id } });
      return row.status === 'stopped' ? row : null;
    });
    expect(job.stopReason).toBe('operator');
    expect(ownedProcesses(job)).toEqual([]);
    expect((await runRow(h, runId)).status).toBe('running');
    expect((await h.request('POST', `/api/work/${monitor.body.id}/stop`, c.token)).status).toBe(409);
    expect((await h.request('POST', `/api/work/00000000-0000-4000-8000-000000000000/stop`, c.token)).status).toBe(404);
    await h.request('POST', `/api/work/${runId}/stop`, c.token);
  });

  test('three racing POSTs of a job with one Idempotency-Key start it once', async () => {
    const { c, runId } = await startRun('sleep 60');
    await running(runId);
    const post = () =>
      fetch(`${h.apiUrl}/api/runs/${runId}/jobs`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${c.token}`,
          'content-type': 'application/json',
          'idempotency-key': 'monitor-1',
        },
        body: JSON.stringify({ kind: 'monitor', command: 'sh', args: ['-c', 'tail -F /dev/null'] }),
      }).then(async (r) => ({
        status: r.status,
        replayed: r.headers.get('idempotent-replayed'),
        body: (await r.json()) as { id: string },
      }));
    const answers = await Promise.all([post(), post(), post()]);
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.filter((a) => a.replayed === 'true')).toHaveLength(2);
    expect(await h.services.db.job.count({ where: { ownerRunId: runId } })).toBe(1);
    await h.request('POST', `/api/work/${runId}/stop`, c.token);
  });

  test('an owner that ends stops its monitors; a replacement run after a context overflow inherits none', async () => {
    const marker = join(tmpdir(), `tw-overflow-${Date.now()}`);
    // first run: starts a monitor with its own token, then dies of a "context overflow"; the replacement succeeds
    const script = `if [ -f ${marker} ]; then exit 0; fi; touch ${marker}; curl -sf -X POST -H "authorization: Bearer $TREEWARDEN_RUN_TOKEN" -H "content-type: application/json" -d '{"kind":"monitor","command":"sleep","args":["300"]}' "$TREEWARDEN_API_URL/api/runs/$TREEWARDEN_RUN_ID/jobs" > /dev/null; sleep 1; echo "context window exceeded"; exit 7`;
    const { c, runId, issueId } = await startRun(script);
    const failed = await settled(h, runId);
    expect(failed).toMatchObject({ status: 'failed', exitCode: 7 });
    const [monitor] = await h.services.db.job.findMany({ where: { ownerRunId: runId } });
    const stopped = await eventually('monitor stopped with its owner', async () => {
      const row = await h.services.db.job.findUniqueOrThrow({ where: { id: monitor.id } });
      return row.status === 'stopped' ? row : null;
    });
    expect(stopped.stopReason).toBe('owner_terminal');
    expect(ownedProcesses(stopped)).toEqual([]);

    const replacement = await h.request('POST', `/api/issues/${issueId}/wake`, c.token, {});
    expect((await settled(h, replacement.body.runId)).status).toBe('succeeded');
    expect(await h.services.db.job.count({ where: { ownerRunId: replacement.body.runId } })).toBe(0);
    expect((await inspect(c, replacement.body.runId)).jobs).toEqual([]);
    rmSync(marker, { force: true });
  });

  test("a run's end reconciles it with no acknowledgement: an exit code is an inspected result", async () => {
    const { c, runId } = await startRun('echo "tests failed: 3"; exit 3');
    const run = await settled(h, runId);
    expect(run).toMatchObject({ status: 'failed', failureState: 'inspected' });
    expect((run.inspection as { outputTail: string }).outputTail).toContain('tests failed: 3');
    expect((await inspect(c, runId)).verdict).toBe('terminal-clean');
  });
});

describe('failures, supersession and acknowledgement', () => {
  test('a provider failure is failed-uninspected, never running, and its finding is emitted once', async () => {
    const c = await seedCompany(h);
    const agent = await c.agent({ type: 'process', command: '/nonexistent/agent-provider', args: [] });
    const issue = await c.issue({ title: 'provider down', assigneeAgentId: agent.id });
    const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
    const run = await settled(h, wake.body.runId);
    expect(run).toMatchObject({ status: 'failed', failureState: 'uninspected' });
    for (let i = 0; i < 3; i++) expect((await inspect(c, run.id)).verdict).toBe('failed-uninspected');
    expect((await findings(run.id)).filter((f) => f.verdict === 'failed-uninspected')).toHaveLength(1);
  });

  test('a failed run is superseded by a verified replacement with gate evidence: A → B → C', async () => {
    const marker = join(tmpdir(), `tw-supersede-${Date.now()}`);
    const { c, runId: a, issueId } = await startRun(`if [ -f ${marker} ]; then exit 0; fi; touch ${marker}; exit 1`);
    expect((await settled(h, a)).status).toBe('failed');
    const wake = await h.request('POST', `/api/issues/${issueId}/wake`, c.token, {});
    const b = wake.body.runId as string;
    expect((await settled(h, b)).status).toBe('succeeded');
    expect((await runRow(h, a)).failureState).toBe('inspected'); // success alone is not verification
    const failing = await h.request('POST', `/api/runs/${b}/evidence`, c.token, { check: 'ci', passed: false });
    expect(failing.status).toBe(201);
    expect((await runRow(h, a)).failureState).toBe('inspected');
    const evidence = await h.request('POST', `/api/runs/${b}/evidence`, c.token, {
      check: 'ci',
      passed: true,
      details: { url: 'https://ci.example/1' },
    });
    expect(evidence.status).toBe(201);
    expect(await runRow(h, a)).toMatchObject({
      failureState: 'superseded',
      supersededByRunId: b,
      supersessionEvidenceId: evidence.body.id,
    });
    const view = await inspect(c, a);
    expect(view).toMatchObject({
      verdict: 'failed-superseded',
      supersededBy: { run: { id: b }, evidence: { id: evidence.body.id, check: 'ci' } },
    });
    // recovered work raises nothing new, however often it is looked at or reconciled
    const before = (await findings(a)).length;
    await h.request('POST', `/api/runs/${b}/evidence`, c.token, { check: 'ci', passed: true });
    for (let i = 0; i < 3; i++) await inspect(c, a);
    expect(await findings(a)).toHaveLength(before);
    rmSync(marker, { force: true });
  });

  test('a matching tombstone with no process, lock or lease makes failed work terminal-clean; a live writer keeps it open', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'tw-workspace-'));
    const c = await seedCompany(h);
    const agent = await c.agent({ type: 'process', command: '/nonexistent/agent-provider', args: [], cwd: workspace });
    const issue = await c.issue({ title: 'tombstoned', assigneeAgentId: agent.id });
    const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
    const run = await settled(h, wake.body.runId);
    expect((await inspect(c, run.id)).verdict).toBe('failed-uninspected');
    writeFileSync(join(workspace, '.treewarden-tombstone'), `${run.id}\n`);
    const writer = spawn('sleep', ['60'], { stdio: 'ignore' });
    writeFileSync(join(workspace, '.treewarden-writer.lock'), String(writer.pid));
    expect((await inspect(c, run.id)).verdict).not.toBe('terminal-clean');
    writer.kill('SIGKILL');
    await eventually('writer gone', async () => (await inspect(c, run.id)).verdict === 'terminal-clean');
    writeFileSync(join(workspace, '.treewarden-tombstone'), 'another-run\n');
    expect((await inspect(c, run.id)).verdict).toBe('failed-uninspected');
    rmSync(workspace, { recursive: true, force: true });
  });

  test('treewarden ack (and inspect) work from sh and bash with plain arguments', async () => {
    const c = await seedCompany(h);
    const agent = await c.agent({ type: 'process', command: '/nonexistent/agent-provider', args: [] });
    for (const shell of ['sh', 'bash']) {
      const issue = await c.issue({ title: `ack from ${shell}`, assigneeAgentId: agent.id });
      const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
      const run = await settled(h, wake.body.runId);
      // asynchronously: the API answering the CLI lives in this process
      const result = await shellCommand(shell, `bin/treewarden ack ${run.id}`, {
        TREEWARDEN_API_URL: h.apiUrl,
        TREEWARDEN_TOKEN: c.token,
      });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('acknowledged');
      expect((await runRow(h, run.id)).failureState).toBe('acknowledged');
      const inspected = await shellCommand(shell, `bin/treewarden inspect ${run.id} --json`, {
        TREEWARDEN_API_URL: h.apiUrl,
        TREEWARDEN_TOKEN: c.token,
      });
      expect(inspected.status).toBe(0);
      expect(JSON.parse(inspected.stdout)).toMatchObject({
        kind: 'agent_run',
        id: run.id,
        verdict: 'terminal-clean',
        failure: { state: 'acknowledged' },
      });
    }
  });

  test('bad input: malformed ids 400, unknown 404, bad job and evidence bodies 400, ack of a live run 409', async () => {
    const { c, runId } = await startRun('sleep 30');
    await running(runId);
    expect((await h.request('GET', '/api/work/nope/inspect', c.token)).status).toBe(400);
    expect((await h.request('GET', '/api/work/00000000-0000-4000-8000-000000000000/inspect', c.token)).status).toBe(
      404,
    );
    expect((await h.request('POST', `/api/runs/${runId}/jobs`, c.token, { kind: 'daemon', command: 'x' })).status).toBe(
      400,
    );
    expect((await h.request('POST', `/api/runs/${runId}/jobs`, c.token, { kind: 'monitor', command: '' })).status).toBe(
      400,
    );
    expect((await h.request('POST', `/api/runs/${runId}/evidence`, c.token, { check: 'ci' })).status).toBe(400);
    expect((await h.request('POST', `/api/runs/${runId}/ack`, c.token)).status).toBe(409);
    const other = await seedCompany(h);
    expect((await h.request('GET', `/api/work/${runId}/inspect`, other.token)).status).toBe(404);
    expect(await h.services.db.job.count({ where: { ownerRunId: runId } })).toBe(0);
    expect(await h.services.db.gateEvidence.count({ where: { runId } })).toBe(0);
    await h.request('POST', `/api/work/${runId}/stop`, c.token);
  });
});
