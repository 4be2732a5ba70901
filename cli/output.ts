/** What every command prints: its data as JSON with `--json`, else the human line. */
export interface JsonOption {
  json?: boolean;
}

export const print = (opts: JsonOption, data: unknown, human: () => string) =>
  process.stdout.write(opts.json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
