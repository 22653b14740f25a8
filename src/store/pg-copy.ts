// Bulk rows into PostgreSQL with `COPY table (columns) FROM STDIN` in text format, as a pg Submittable.
// Measured against one json_to_recordset INSERT per 1000 rows: the server's CPU per row falls from
// 27-34 to 13-15 µs (the JSON parse and the executor's projection go away), at the same client cost.
import type pg from 'pg';

/**
 * Characters the text format gives a meaning (escaped), and NUL, which PostgreSQL text cannot hold: it
 * becomes U+FFFD, as a lone surrogate does when the lines are encoded to UTF-8.
 */
const SPECIAL = /[\\\t\n\r\0]/;
const SPECIAL_ALL = new RegExp(SPECIAL.source, 'g');
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\uFFFD' };

/** One value in COPY's text format: `\N` for null, `t`/`f` for booleans, backslash escapes in text. */
export function copyValue(v: string | number | boolean | null): string {
  if (v === null) return '\\N';
  if (typeof v === 'string') return SPECIAL.test(v) ? v.replace(SPECIAL_ALL, (c) => ESCAPES[c]!) : v;
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (!Number.isFinite(v)) throw new TypeError(`cannot COPY the number ${v}`);
  return String(v);
}

/** One row as a COPY text line (tab-separated, newline-terminated). */
export function copyLine(values: ReadonlyArray<string | number | boolean | null>): string {
  let line = copyValue(values[0]!);
  for (let i = 1; i < values.length; i++) line += '\t' + copyValue(values[i]!);
  return line + '\n';
}

/**
 * The protocol side of one COPY FROM STDIN: pg calls `submit` when the connection is free, then
 * `handleCopyInResponse` once the server is ready for data; the outcome is the command's end
 * (ReadyForQuery) or the first error (a server error, or the connection's loss).
 */
class CopyIn {
  readonly text: string;
  readonly #data: Buffer;
  readonly #done: (err?: Error) => void;
  #settled = false;

  constructor(text: string, data: Buffer, done: (err?: Error) => void) {
    this.text = text;
    this.#data = data;
    this.#done = done;
  }

  submit(connection: { query(text: string): void }): void { connection.query(this.text); }

  handleCopyInResponse(connection: { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void }): void {
    connection.sendCopyFromChunk(this.#data);
    connection.endCopyFrom();
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handleReadyForQuery(): void { this.#settle(); }
  handleError(err: Error): void { this.#settle(err); }

  #settle(err?: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#done(err);
  }
}

/** Copies `lines` (each from copyLine) into `table`; rejects with pg's error (its `code` kept) on failure. */
export function copyIn(client: pg.ClientBase, table: string, columns: string, lines: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const q = new CopyIn(`COPY ${table} (${columns}) FROM STDIN`, Buffer.from(lines, 'utf8'), (err) => (err ? reject(err) : resolve()));
    // pg accepts any object with submit() as a query; its typings only name its own query classes.
    (client as unknown as { query(q: CopyIn): unknown }).query(q);
  });
}
