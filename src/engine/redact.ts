// Removes secrets from upstream text before it leaves the process or is stored (client error
// messages, stream error events, inference records, logs): the configured provider credentials, and
// anything shaped like an API key or a bearer token, whoever's it is.
import type { Config } from '../config/types.ts';

export type Redact = (text: string) => string;

export const REDACTED = '[redacted]';

/**
 * Key-like shapes, whoever issued them: `sk-...` (OpenAI, Anthropic, this gateway's own keys),
 * bearer/basic credentials, AWS access key ids, Google API keys, well-known prefixed tokens, and
 * credentials in query strings. Each needs enough characters that ordinary words never match.
 */
const SHAPES = [
  String.raw`\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{16,}`,
  String.raw`\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{8,}`,
  String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
  String.raw`\bAIza[0-9A-Za-z_\-]{35}`,
  String.raw`\b(?:ghp|gho|ghu|ghs|github_pat|glpat|xox[abpr]|hf|gsk|xai|pplx|nvapi|csk|r8)[_\-][A-Za-z0-9_\-]{16,}`,
  String.raw`(?<=[?&](?:key|api[_\-]?key|access_token|token|sig|signature)=)[^&\s"'<>]{6,}`,
];

/** Secrets shorter than this are not searched for: a short value would match ordinary words. */
const MIN_SECRET = 8;

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Builds the redactor for a list of literal secrets (longest first, so one never hides part of another). */
export function createRedactor(secrets: readonly string[]): Redact {
  const literal = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET))].sort((a, b) => b.length - a.length).map(escape);
  const pattern = new RegExp([...literal, ...SHAPES].join('|'), 'gi');
  return (text) => (text === '' ? text : text.replace(pattern, REDACTED));
}

const byConfig = new WeakMap<Config, Redact>();

/** Transform options and provider headers whose names say they hold a credential. */
const SECRET_NAME = /key|secret|token|password|session|auth|credential|signature/i;

/** The redactor of a config version: its providers' keys and every secret-looking transform option. */
export function redactorFor(cfg: Config): Redact {
  let r = byConfig.get(cfg);
  if (!r) {
    const secrets: string[] = [];
    for (const p of cfg.providers.values()) {
      if (p.apiKey) secrets.push(p.apiKey, encodeURIComponent(p.apiKey));
      if (p.auth.type === 'transform') for (const [k, v] of Object.entries(p.auth.options)) if (SECRET_NAME.test(k) && typeof v === 'string') secrets.push(v);
      for (const [k, v] of Object.entries(p.headers)) if (SECRET_NAME.test(k)) secrets.push(v.replace(/^(?:bearer|basic)\s+/i, ''));
    }
    if (cfg.auth.adminKey) secrets.push(cfg.auth.adminKey);
    r = createRedactor(secrets);
    byConfig.set(cfg, r);
  }
  return r;
}
