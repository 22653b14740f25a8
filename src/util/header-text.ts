// Names from config files (models, policies, rules, key globs) as response header values: an operator
// may write any script, and Node refuses a header holding a line break or a character past Latin-1
// (ERR_INVALID_CHAR), which turned every response the name showed in into a 500.

/** `s` with '?' for each character outside printable ASCII (the bodies keep names whole). */
export const headerText = (s: string): string => s.replace(/[^\x20-\x7e]/g, '?');
