// A failure at start that the operator fixes in the config or the environment (a database that cannot
// be opened, a port in use): main.ts prints its message alone and exits 1, with no stack trace.

export class OperatorError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'OperatorError';
  }
}
