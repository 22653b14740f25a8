// A stored response as it is written: the row's fields, the response as JSON text, and the request's
// input either as JSON text or as the client's raw body bytes, whose `input` the writer extracts
// itself. Shared by the main thread and the store's write thread (src/workers/store-writer.ts), so a
// large conversation is parsed and serialised off the event loop and both sides give its items the same ids.
import type { SqlRunner } from '../store/sql-runner.ts';

type Rec = Record<string, unknown>;

export type StoredResponseRow = {
  id: string; keyId: string; createdAt: number; expiresAt: number; previousId: string | null;
  /** The response object as JSON text. */
  responseJson: string;
  /** The input items this request added, as JSON text; or else `body`. */
  inputJson?: string;
  /** The client's request body (validated JSON): its `input` becomes the stored input items. */
  body?: Uint8Array;
  /** Also delete the rows that expired before this time (the hourly purge rides on a write). */
  purgeBefore?: number;
};

/** Input items as stored: a string input becomes one user message; every item gets an id derived from the response id. */
export function storedInputItems(input: unknown, responseId: string): Rec[] {
  const items: Rec[] = typeof input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }] : Array.isArray(input) ? input as Rec[] : [];
  const hex = responseId.replaceAll('-', '');
  return items.map((raw, i) => {
    const it: Rec = { ...raw };
    if ((it.type ?? 'message') === 'message') {
      it.type = 'message';
      if (typeof it.content === 'string') it.content = [{ type: it.role === 'assistant' ? 'output_text' : 'input_text', text: it.content }];
    }
    if (typeof it.id !== 'string') it.id = `${it.type === 'message' ? 'msg' : 'item'}_${hex}i${i.toString(16).padStart(4, '0')}`;
    return it;
  });
}

// Idempotent: a failed write is retried (src/responses/write-retries.ts), and one that committed but
// reported a failure (a connection lost at the commit) must not fail every retry on its own row.
const INSERT_SQL = 'INSERT INTO stored_responses (id, key_id, created_at, expires_at, previous_id, input_items, response) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING';

/** The row's input items: its JSON, or else the `input` of its request body (parsed here). */
export function inputItemsOf(row: StoredResponseRow): Rec[] {
  if (row.inputJson !== undefined) return JSON.parse(row.inputJson) as Rec[];
  return storedInputItems((JSON.parse(Buffer.from(row.body!.buffer, row.body!.byteOffset, row.body!.byteLength).toString('utf8')) as Rec).input, row.id);
}

/** Inserts one row (on whichever thread calls it), then purges when asked; the body, when given, is parsed here. */
export async function insertStoredResponse(sql: SqlRunner, row: StoredResponseRow): Promise<void> {
  const input = row.inputJson ?? JSON.stringify(inputItemsOf(row));
  await sql.run(INSERT_SQL, [row.id, row.keyId, row.createdAt, row.expiresAt, row.previousId, input, row.responseJson]);
  if (row.purgeBefore !== undefined) await sql.run('DELETE FROM stored_responses WHERE expires_at <= ?', [row.purgeBefore]);
}
