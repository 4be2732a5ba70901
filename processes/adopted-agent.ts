/**
 * Adoption's host half (issue 25): whether an agent whose worker let go of it still runs, judged from this host
 * alone, by a worker that is not its parent. The run's cgroup is consulted first: its members are the agent and all
 * it started, whatever they did with their pid, session or environment, and its start shell records the agent's
 * exit status in the run folder (processes/cgroups.ts). Where the host has no cgroups, the recorded pid and start
 * time of the start shell are the only identity; a pid the kernel gave to a later process is not the agent.
 */
import { parseExitStatus } from '../domain/adoption';
import { readSmallRunFile } from '../runs/run-files';
import { cgroupMembers } from './cgroups';
import { isSameProcessAlive } from './process-table';

/** The agent as its run recorded it: its start shell (pid and start time), its cgroup and its exit status file. */
export interface AdoptedAgent {
  pid: number;
  startTime: string;
  /** null where the host contains runs by process group */
  cgroupPath: string | null;
  exitFile: string;
}

export type AgentState =
  | { kind: 'running' }
  | { kind: 'exited'; exitCode: number }
  /** gone without a recorded status: no worker can learn how it ended */
  | { kind: 'vanished' };

const RUNNING: AgentState = { kind: 'running' };

export function adoptedAgentState(agent: AdoptedAgent): AgentState {
  return agent.cgroupPath ? stateByCgroup(agent, agent.cgroupPath) : stateByPid(agent);
}

/**
 * The agent ran while its cgroup has members and its start shell has not recorded a status: a start shell that died
 * unrecorded (killed on its own) leaves the agent's processes running in the cgroup, still the run's. A recorded status
 * counts once the shell that wrote it has left the cgroup; whatever the agent left behind there is the orphan sweep's.
 */
function stateByCgroup(agent: AdoptedAgent, cgroupPath: string): AgentState {
  const members = cgroupMembers(cgroupPath);
  const exitCode = recordedStatus(agent);
  const shellInCgroup = members.includes(agent.pid) && isSameProcessAlive(agent.pid, agent.startTime);
  if (exitCode !== null && !shellInCgroup) return { kind: 'exited', exitCode };
  if (members.length > 0) return RUNNING;
  return { kind: 'vanished' };
}

/** Without a cgroup: the start shell is the agent while it lives, and its recorded status tells how it ended. */
function stateByPid(agent: AdoptedAgent): AgentState {
  if (isSameProcessAlive(agent.pid, agent.startTime)) return RUNNING;
  const exitCode = recordedStatus(agent);
  return exitCode === null ? { kind: 'vanished' } : { kind: 'exited', exitCode };
}

/** the file is the agent's to write too: only a shell status counts (domain/adoption.ts) */
const recordedStatus = (agent: AdoptedAgent): number | null => parseExitStatus(readSmallRunFile(agent.exitFile, 16));
