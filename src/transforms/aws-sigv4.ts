// The `aws-sigv4` transform: signs Bedrock requests with the credentials named in the provider
// YAML, or else with the standard AWS credential chain (aws-credential-chain.ts), loaded off the
// event loop: a request awaits them only when none are cached (a cold start, or expired ones).
import { GatewayError } from '../gateway-error.ts';
import { signSigV4 } from '../formats/bedrock/sigv4.ts';
import { AwsCredentialChain } from './aws-credential-chain.ts';
import { namesCredentialSource, type AwsCredentials } from './aws-credentials.ts';
import type { RequestTransform, UpstreamRequestParts } from './index.ts';

/** One chain (and cache) per profile option; the chain reads the process environment. */
const chains = new Map<string, AwsCredentialChain>();

/** The chain of a provider without keys in its options; null when its options name the keys. */
function chainFor(o: Record<string, string>): AwsCredentialChain | null {
  if (o.access_key_id && o.secret_access_key) return null;
  const key = o.profile ?? '';
  let chain = chains.get(key);
  if (!chain) chains.set(key, (chain = new AwsCredentialChain(process.env, o.profile || undefined)));
  return chain;
}

/** The gateway's own credentials failing is the operator's problem: an upstream error (502), which falls back. */
const noCredentials = (why: string): GatewayError =>
  new GatewayError('upstream_error', `the provider's AWS credentials could not be loaded: ${why}`);

function credentials(o: Record<string, string>): AwsCredentials {
  const chain = chainFor(o);
  if (!chain) {
    return { accessKeyId: o.access_key_id!, secretAccessKey: o.secret_access_key!, ...(o.session_token ? { sessionToken: o.session_token } : {}), source: 'provider options' };
  }
  const c = chain.current();
  if (!c) throw noCredentials('not loaded yet');
  return c;
}

export function signAwsSigV4(req: UpstreamRequestParts, o: Record<string, string>): Record<string, string> {
  const c = credentials(o);
  return signSigV4({
    method: req.method, url: req.url, headers: req.headers, body: req.body,
    region: o.region ?? 'us-east-1', service: o.service ?? 'bedrock',
    accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey,
    ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}),
  });
}

export const awsSigV4: RequestTransform = {
  apply: signAwsSigV4,
  ready(o) {
    const wait = chainFor(o)?.ready() ?? null;
    return wait === null ? null : wait.then(() => undefined, (e: unknown) => { throw noCredentials((e as Error).message); });
  },
  warm(o) { chainFor(o)?.refresh(); },
  mayAuthenticate: (o, env) => Boolean((o.access_key_id && o.secret_access_key) || o.profile) || namesCredentialSource(env),
};

/** The chain a provider's options use, if any (tests and /health). */
export const credentialChainFor = (o: Record<string, string>): AwsCredentialChain | null => chainFor(o);

/** Drops every chain and its cache (tests that change the process environment between gateways). */
export const forgetCredentialChains = (): void => chains.clear();
