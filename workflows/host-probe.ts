import { setCurrentDetails } from '@temporalio/workflow';
import type { HostProbeAnswer, HostProbeRequest } from '../domain/host-probe';
import { onHost } from './host-affine';

export interface HostProbeInput extends HostProbeRequest {
  hostId: string;
  waitForHostMs: number;
}

/**
 * `host-probe:<hostId>:<uuid>`: inspection from anywhere (the API's host included) asks the owning
 * host what it sees of a run, through that host's queue. No worker there within `waitForHostMs`
 * means the host is unreachable: the answer says so instead of reporting an empty process tree.
 */
export async function hostProbeWorkflow({
  hostId,
  waitForHostMs,
  runIds,
  jobIds,
}: HostProbeInput): Promise<HostProbeAnswer> {
  // reading /proc takes milliseconds; one attempt, because the caller is waiting and can ask again
  const host = onHost(hostId, { waitForHostMs, startToCloseTimeout: '30 seconds', maximumAttempts: 1 });
  try {
    const probe = await host.probeHost.executeWithOptions({ summary: `Read the process table of host ${hostId}` }, [
      { runIds, jobIds },
    ]);
    setCurrentDetails(`host ${hostId} answered`);
    return { reachable: true, ...probe };
  } catch {
    setCurrentDetails(`host ${hostId} is unreachable: no worker of that host answered`);
    return { reachable: false, hostId };
  }
}
