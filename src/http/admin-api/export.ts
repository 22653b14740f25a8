// Streamed CSV and JSONL downloads: rows are written as they are produced, with back-pressure, so an
// export of any size holds one slice in memory. CSV cells that a spreadsheet would run as a formula
// (=, +, -, @ first) are prefixed with ' (stored text is untrusted).
import type { ServerResponse } from 'node:http';
import { SECURITY_HEADERS } from './context.ts';

export type ExportFormat = 'csv' | 'jsonl';

export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Writes `rows` (flat objects; `columns` fixes the CSV header) to `res` as a download named `name`. */
export async function streamExport(res: ServerResponse, format: ExportFormat, name: string, columns: readonly string[], rows: AsyncIterable<Record<string, unknown>>): Promise<void> {
  res.writeHead(200, {
    ...SECURITY_HEADERS, 'cache-control': 'no-store',
    'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    'content-disposition': `attachment; filename="${name}.${format}"`,
  });
  const write = async (s: string): Promise<void> => {
    if (!res.write(s)) await new Promise<void>((ok) => { res.once('drain', ok); res.once('close', ok); });
  };
  if (format === 'csv') await write(columns.join(',') + '\r\n');
  let buf = '';
  for await (const r of rows) {
    if (res.destroyed) return;
    buf += format === 'csv' ? columns.map((c) => csvCell(r[c])).join(',') + '\r\n' : JSON.stringify(r) + '\n';
    if (buf.length > 64 * 1024) { await write(buf); buf = ''; }
  }
  if (buf) await write(buf);
  res.end();
}
