// The store's clock: what every time-based sweep measures against. On PostgreSQL every replica shares
// it (`now()`), so one replica whose clock runs ahead neither moves shared cursors past the others'
// rows nor deletes what their retention would keep (a host a year ahead computed every record as past
// `records_days`); SQLite's file is this host's, so its clock is this process's.
import type { SqlRunner } from './sql-runner.ts';

/** The time by the store's clock (ms since the epoch). */
export async function storeNow(sql: SqlRunner): Promise<number> {
  if (sql.dialect === 'sqlite') return Date.now();
  const t = (await sql.all('SELECT now() AS t'))[0]?.t;
  return t instanceof Date ? t.getTime() : Date.parse(String(t));
}
