/**
 * The host-probe workflow's boundary: what inspection asks the owning host, and what it gets back
 * (the host's view of its processes, or that no worker of the host answered).
 */

export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** user + system CPU ticks so far: a rising value means the process is working */
  cpuTicks: number;
  command: string;
}

export interface HostProbeRequest {
  runIds: string[];
  jobIds: string[];
}

export interface RunOnHost {
  processes: ProcessInfo[];
  writers: number[];
  /** a tombstone naming the run sits in its workspace */
  tombstone: boolean;
  journalPulseAt: string | null;
  outputModifiedAt: string | null;
}

export interface HostProbe {
  hostId: string;
  runs: Record<string, RunOnHost>;
  jobs: Record<string, ProcessInfo[]>;
}

export type HostProbeAnswer = ({ reachable: true } & HostProbe) | { reachable: false; hostId: string };
