/**
 * Run as a process of its own (`node --import tsx`) whose environment carries a run's owner token:
 * lists the processes that run owns, as the inspection does, and says who did the looking, so a
 * test can prove the inspector (and its parent) never find themselves. argv[2]: the run's
 * `{ ownerToken, processGroupId }` as JSON. Prints `{ self, parent, found }`: pids, and
 * for each process found its parent's (tsx's own esbuild child inherits the token too).
 */
import { ownedProcesses, type ProcessOwner } from '../../processes/process-table';

const owner = JSON.parse(process.argv[2]) as ProcessOwner;
const found = ownedProcesses(owner).map(({ pid, ppid }) => ({ pid, ppid }));
process.stdout.write(JSON.stringify({ self: process.pid, parent: process.ppid, found }));
