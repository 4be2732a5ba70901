/**
 * The SDK's own metrics (Temporal core: workflow task schedule-to-start latency, pollers, slots: how an operator
 * tells a saturated server from a starved worker). Core serves them on a loopback port of its own; the worker's
 * `/metrics` relays that text beside treewarden's, so one scrape target per worker shows both.
 */
import { freePort } from '../runtime/ports';

/** A free loopback address for core's exporter (asked of the kernel, then released for core to bind). */
export const coreMetricsAddress = async (): Promise<string> => `127.0.0.1:${await freePort()}`;

/** Core's metrics as Prometheus text; a comment saying why when they cannot be had (treewarden's are still served). */
export async function coreMetricsText(address: string, timeoutMs = 2_000): Promise<string> {
  try {
    const response = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return `# temporal core metrics unavailable: HTTP ${response.status}\n`;
    return await response.text();
  } catch (error) {
    return `# temporal core metrics unavailable: ${(error as Error).message}\n`;
  }
}
