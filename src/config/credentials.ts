// Whether a provider can authenticate its requests, as far as its config and the environment tell
// without fetching anything: the router routes only to providers that can (a model whose provider
// has no key would fail every attempt it gets).
import { TRANSFORMS } from '../transforms/index.ts';
import type { Env } from './env.ts';
import type { UpstreamAuth } from './types.ts';

export function canAuthenticate(auth: UpstreamAuth, apiKey: string, env: Env): boolean {
  if (auth.type === 'none') return true;
  if (auth.type === 'transform') return TRANSFORMS[auth.transform]?.mayAuthenticate?.(auth.options, env) ?? true;
  return apiKey !== '';
}
