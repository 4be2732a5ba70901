/**
 * @module Unit: a run's output file is read from its end and capped in place (runs/output-file.ts), and the writes of
 * a process that holds it open for appending, as an agent does, land after the kept tail.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capOutputFile, readFileTail } from '../../runs/output-file';

const scratch = () => join(mkdtempSync(join(tmpdir(), 'tw-output-')), 'output.log');

test('under the cap nothing changes', () => {
  const file = scratch();
  writeFileSync(file, 'short');
  expect(capOutputFile(file, 4096)).toBe(0);
  expect(readFileSync(file, 'utf8')).toBe('short');
});

test('over the cap the newest half stays behind a marker, and an open appender writes after it', () => {
  const file = scratch();
  const body = Array.from({ length: 1000 }, (_, i) => `line ${String(i).padStart(4, '0')}\n`).join('');
  writeFileSync(file, body);
  const agent = openSync(file, 'a');
  const at = new Date('2026-12-02T00:00:00.000Z');
  expect(capOutputFile(file, 4096, at)).toBe(body.length - 2048);
  writeSync(agent, 'after the cap\n');
  closeSync(agent);
  const text = readFileSync(file, 'utf8');
  const marker =
    `[treewarden: ${body.length - 2048} earlier bytes of output dropped at 2026-12-02T00:00:00.000Z, ` +
    'the output cap being 4096 bytes]\n';
  expect(text).toBe(marker + body.slice(-2048) + 'after the cap\n');
});

test('the tail is the end of the file, and a missing file has none', () => {
  const file = scratch();
  writeFileSync(file, 'abcdefghij');
  expect(readFileTail(file, 4)).toBe('ghij');
  expect(readFileTail(file, 100)).toBe('abcdefghij');
  expect(readFileTail(`${file}.missing`, 4)).toBeNull();
});
