// Picks and prepares the store: PostgreSQL when a database URL is given, else the SQLite file.
// Migrations run before the store is handed out, so callers always see the current schema.
import { PostgresStore } from './postgres.ts';
import { SqliteStore } from './sqlite.ts';
import type { Store } from './types.ts';

export type OpenStoreOptions = { sqlitePath: string; databaseUrl?: string; pgSchema?: string };

/** Defaults read from the environment: GATEWAY_DB (./data/gateway.db), DATABASE_URL, GATEWAY_PG_SCHEMA. */
export function storeOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): OpenStoreOptions {
  const opts: OpenStoreOptions = { sqlitePath: env.GATEWAY_DB || './data/gateway.db' };
  if (env.DATABASE_URL) opts.databaseUrl = env.DATABASE_URL;
  if (env.GATEWAY_PG_SCHEMA) opts.pgSchema = env.GATEWAY_PG_SCHEMA;
  return opts;
}

export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  const store: Store = opts.databaseUrl
    ? new PostgresStore(opts.pgSchema ? { url: opts.databaseUrl, schema: opts.pgSchema } : { url: opts.databaseUrl })
    : new SqliteStore({ path: opts.sqlitePath });
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  return store;
}
