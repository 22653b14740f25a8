// The one check of names people read in listings, logs and the dashboard (key names, user names and
// emails, provider ids and names, policy names): no character that prints as nothing or changes how
// the text around it is shown. A right-to-left override (U+202E) made `keys list` show a key named
// "\u202Etset-dorp" as "prod-test"; a zero-width space made two names look the same.
// Used by the admin API (400 invalid_parameter), the command line (exit 2) and the config loader.

/**
 * C0 and C1 controls and DEL; the Arabic letter mark; zero-width space, joiners and the LRM/RLM marks
 * (U+200B-U+200F); the bidi embeddings and overrides (U+202A-U+202E); the invisible operators and word
 * joiner (U+2060-U+2064); the bidi isolates (U+2066-U+2069); the byte-order mark.
 */
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

/** The first such character as `U+XXXX`, or null when the text has none. */
export function invisibleCharacter(text: string): string | null {
  const m = INVISIBLE.exec(text);
  return m === null ? null : `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why `text` cannot be a name (`what` is how the caller calls the field: "name", "--email"), or null. */
export function invisibleNameProblem(what: string, text: string): string | null {
  const c = invisibleCharacter(text);
  return c === null ? null : `${what} must not contain control, invisible or text-direction characters (found ${c})`;
}
