// PostgreSQL for tests: the shared server (TEST_DATABASE_URL, else 127.0.0.1:5432/test), whether it
// answers (a run with CI=true fails when it does not), and a fresh schema per test file, dropped after.
import pg from 'pg';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** True when the server answers within 2 s; throws under CI=true when it does not (suites must fail, never skip, there). */
export async function pgAvailable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  let up = false;
  try { await c.connect(); await c.end(); up = true; } catch { up = false; }
  if (!up && process.env.CI === 'true') throw new Error(`PostgreSQL unreachable at ${PG_URL} and CI=true`);
  return up;
}

/** A schema name no other run uses (`<prefix>_<pid>_<time>`). */
export const freshSchema = (prefix: string): string => `${prefix}_${process.pid}_${Date.now().toString(36)}`;

export async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try { await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); } finally { await c.end(); }
}
