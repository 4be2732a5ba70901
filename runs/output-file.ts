/**
 * A run's output file: read from its end (a run may have written gigabytes), and kept under a cap. The agent's
 * processes write to it directly (O_APPEND, no pipe through the worker), so the cap is applied in place.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';

/** The last `maxBytes` of a file as text, or null when it cannot be read. */
export function readFileTail(file: string, maxBytes: number): string | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    return tailOf(fd, fstatSync(fd).size, maxBytes).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function tailOf(fd: number, size: number, maxBytes: number): Buffer {
  const length = Math.min(size, maxBytes);
  const buffer = Buffer.alloc(length);
  readSync(fd, buffer, 0, length, size - length);
  return buffer;
}

/**
 * When the file has grown past `maxBytes`, keeps its newest half behind a marker line saying what was dropped.
 * The agent's appends land after the kept tail (O_APPEND writes at the end as it is then); a write racing the
 * rewrite itself may be lost with the dropped part. Returns the bytes dropped (0 when under the cap).
 */
export function capOutputFile(file: string, maxBytes: number, now = new Date()): number {
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch {
    return 0;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= maxBytes) return 0;
    const kept = tailOf(fd, size, Math.floor(maxBytes / 2));
    const dropped = size - kept.length;
    const marker =
      `[treewarden: ${dropped} earlier bytes of output dropped at ${now.toISOString()}, ` +
      `the output cap being ${maxBytes} bytes]\n`;
    ftruncateSync(fd, 0);
    writeSync(fd, Buffer.concat([Buffer.from(marker), kept]), 0, undefined, 0);
    return dropped;
  } finally {
    closeSync(fd);
  }
}
