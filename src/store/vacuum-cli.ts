// `gateway store vacuum`: rewrites the SQLite database in one pass, with the page size a new database
// gets (16 KB; SQLite sets the size only before the first page is written, so a file created with
// 4 KB pages keeps them until it is rewritten) and without the free pages that retention's deletes
// leave behind (SQLite never gives them back to the file system by itself). Run it with the gateway
// stopped: leaving WAL mode, which a new page size needs, takes the file for itself, so a gateway
// still holding it makes the command exit 1 with the file unchanged. VACUUM writes a copy before it
// replaces the original (up to the file's size again on disk): a disk that fills up meanwhile leaves
// the original as it was.
import { existsSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { OpenStoreOptions } from './open.ts';
import { PAGE_SIZE } from './sqlite.ts';

export const STORE_USAGE = `usage: gateway store vacuum
  rewrites the SQLite database (storage.sqlite_path or GATEWAY_DB) with 16 KB pages and without
  its free pages; stop the gateway first (docs/storage.md)`;

const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;
const kb = (bytes: number): string => `${bytes / 1024} KB`;

/** The file's size with its WAL (what the database takes on disk). */
function onDisk(path: string): number {
  let n = 0;
  for (const p of [path, `${path}-wal`]) if (existsSync(p)) n += statSync(p).size;
  return n;
}

/** A pragma's answer (its one column), e.g. `page_size` or `journal_mode = DELETE`. */
const pragma = (db: DatabaseSync, text: string): unknown => Object.values(db.prepare(`PRAGMA ${text}`).get() ?? {})[0];

export async function runStoreCommand(args: readonly string[], opts: OpenStoreOptions, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  if (args[0] !== 'vacuum' || args.length > 1) { err(`${args[0] === undefined ? 'name a subcommand' : `unknown arguments "${args.join(' ')}"`}\n${STORE_USAGE}`); return 2; }
  if (opts.databaseUrl) {
    err('store vacuum rewrites the SQLite store; this gateway stores in PostgreSQL (DATABASE_URL), which reuses freed space itself (autovacuum; VACUUM FULL in psql returns it to the disk)');
    return 2;
  }
  const path = opts.sqlitePath;
  if (path === ':memory:' || !existsSync(path)) { err(`no SQLite database at ${path} (storage.sqlite_path or GATEWAY_DB)`); return 1; }
  const before = onDisk(path);
  const t0 = performance.now();
  // No busy wait: a gateway holding the file is reported at once rather than waited for.
  let db: DatabaseSync, page: number, free: number;
  try {
    db = new DatabaseSync(path, { timeout: 0 });
  } catch (e) {
    err(`${path}: cannot open it (${(e as Error).message})`);
    return 1;
  }
  try {
    try {
      page = Number(pragma(db, 'page_size')); free = Number(pragma(db, 'freelist_count'));
    } catch (e) {
      err(`${path}: cannot read it (${(e as Error).message}); nothing was changed`);
      return 1;
    }
    try {
      // A page size changes only outside WAL mode; leaving it needs every other connection closed.
      const mode = String(pragma(db, 'journal_mode = DELETE'));
      if (mode !== 'delete') throw new Error(`the journal stayed in ${mode} mode`);
    } catch (e) {
      err(`${path} is in use (${(e as Error).message}): stop the gateway (and every command using this database), then run store vacuum again; nothing was changed`);
      return 1;
    }
    try {
      db.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
      db.exec('VACUUM');
    } catch (e) {
      err(`${path}: VACUUM failed (${(e as Error).message}); the database is as it was (it needs free disk space about its own size, ${mb(before)}, for the copy)`);
      return 1;
    } finally {
      // Back to the mode every store connection sets (src/store/sqlite.ts), whatever happened above; should
      // that fail too, the next gateway to open the file sets it.
      try { db.exec('PRAGMA journal_mode = WAL'); } catch (e) { err(`${path}: left in rollback-journal mode (${(e as Error).message}); the gateway sets WAL mode again when it opens the file`); }
    }
    const after = onDisk(path);
    out(`${path}: ${kb(page)} -> ${kb(Number(pragma(db, 'page_size')))} pages, ${mb(before)} -> ${mb(after)} (${free} free pages reclaimed) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return 0;
  } finally {
    db.close();
  }
}
