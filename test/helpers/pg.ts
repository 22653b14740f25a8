// PostgreSQL for tests: the shared server (TEST_DATABASE_URL, else 127.0.0.1:5432/test), whether it
// answers (a run with CI=true fails when it does not), and fresh schemas per test file, dropped after.
import { after } from 'node:test';
import pg from 'pg';
import type { OpenStoreOptions } from '../../src/store/open.ts';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** True when the server answers within 2 s; throws under CI=true when it does not (suites must fail, never skip, there). */
export async function pgAvailable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  let up = false;
  try { await c.connect(); await c.end(); up = true; } catch { up = false; }
  if (!up && process.env.CI === 'true') throw new Error(`PostgreSQL unreachable at ${PG_URL} and CI=true`);
  return up;
}

let made = 0;
/** A schema name no other run uses (`<prefix>_<pid>_<time>`, and a counter after the first of a process). */
export const freshSchema = (prefix: string): string => `${prefix}_${process.pid}_${Date.now().toString(36)}${made++ ? `_${made}` : ''}`;

export async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try { await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); } finally { await c.end(); }
}

export type PgTestDb = {
  /** The file's schema. */
  schema: string;
  /** Options that open a store (src/store/open.ts) on `schema`, or on another of the file's schemas. */
  storeOptions(schema?: string): OpenStoreOptions;
  /** One more fresh schema, dropped with the others. */
  another(): string;
};

/**
 * PostgreSQL for one test file, called at its top level: null when the server does not answer (under
 * CI=true it throws instead), else a fresh schema; every schema it makes is dropped when the file's
 * tests end (an `after` hook registered here: register the file's own hooks that close stores first).
 */
export async function pgTestDb(prefix: string): Promise<PgTestDb | null> {
  if (!(await pgAvailable())) return null;
  const schemas: string[] = [];
  const another = (): string => { const s = freshSchema(prefix); schemas.push(s); return s; };
  const schema = another();
  after(async () => { for (const s of schemas) await dropSchema(s); });
  return { schema, another, storeOptions: (s = schema) => ({ sqlitePath: '', databaseUrl: PG_URL, pgSchema: s }) };
}
