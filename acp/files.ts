/** The supervisor's own files: the journal it appends to, the records it replaces whole, the run files it reads. */
import { appendFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { journalLine } from './journal-lines';

/** Appends one bounded JSON line per record. A full disk or a removed folder costs the line, never the run. */
export class Journal {
  private failures = 0;

  constructor(
    readonly file: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  write(record: Record<string, unknown>): void {
    try {
      appendFileSync(this.file, `${journalLine(record, this.now().toISOString())}\n`);
    } catch (error) {
      // said once and then every hundredth time: a journal that cannot be written must not flood the output
      if (this.failures++ % 100 === 0) process.stderr.write(`treewarden-acp: cannot append to the journal: ${error}\n`);
    }
  }
}

/** Replaces `file` whole (a temporary file renamed over it): a reader sees the old text or the new, never a part. */
export function writeFileAtomic(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, file);
}

/** A run file's text, when it exists and is at most `maxBytes`; otherwise why not. */
export function readRunFile(file: string | null, maxBytes: number): { text: string | null; problem: string | null } {
  if (file === null) return { text: null, problem: null };
  try {
    const size = statSync(file).size;
    if (size > maxBytes) return { text: null, problem: `${file} is ${size} bytes, over ${maxBytes}` };
    return { text: readFileSync(file, 'utf8'), problem: null };
  } catch (error) {
    return { text: null, problem: `cannot read ${file}: ${(error as Error).message}` };
  }
}

/** JSON from text, or null with the parse error: a run file is not trusted to be well formed. */
export function parseJson(text: string | null): { value: unknown; problem: string | null } {
  if (text === null) return { value: null, problem: null };
  try {
    return { value: JSON.parse(text), problem: null };
  } catch (error) {
    return { value: null, problem: (error as Error).message };
  }
}

/** Run files are embedded in the prompt; larger ones are refused here rather than cut blind. */
const WAKE_FILE_MAX_BYTES = 1024 * 1024;

/** The wake's files: the context (text and JSON) and the capsule, with what was wrong with them. */
export function readWake(contextFile: string | null, capsuleFile: string | null) {
  const context = readRunFile(contextFile, WAKE_FILE_MAX_BYTES);
  const capsule = readRunFile(capsuleFile, WAKE_FILE_MAX_BYTES);
  const parsed = parseJson(context.text);
  const problems = [context.problem, capsule.problem, parsed.problem && `the context file: ${parsed.problem}`];
  return {
    context: context.text,
    capsule: capsule.text,
    contextValue: parsed.value,
    problems: problems.filter((p): p is string => typeof p === 'string' && p !== ''),
  };
}
