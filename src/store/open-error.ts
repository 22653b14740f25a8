// A store that cannot be opened at start (a `keys`, `users` or `router` command, or serve): the
// operator is told which database and why, without a stack trace, and never sees the password.

import { OperatorError } from '../util/operator-error.ts';

/** Thrown by openStoreFor; main.ts prints the message alone. `cause` keeps the driver's error. */
export class StoreOpenError extends OperatorError {
  constructor(where: string, cause: unknown) {
    super(`cannot open the database ${where}: ${cause instanceof Error ? cause.message : String(cause)}`, cause);
    this.name = 'StoreOpenError';
  }
}

/** The store as the operator configured it: the SQLite file, or the PostgreSQL URL with its password hidden. */
export function describeStore(opts: { sqlitePath: string; databaseUrl?: string }): string {
  if (!opts.databaseUrl) return `${opts.sqlitePath} (storage.sqlite_path)`;
  try {
    const u = new URL(opts.databaseUrl);
    if (u.password) u.password = '***';
    return `${u.href} (storage.database_url)`;
  } catch {
    return 'at storage.database_url (not a URL, such as postgres://user@host:5432/db)';
  }
}
