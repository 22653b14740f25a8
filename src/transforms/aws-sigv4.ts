// The `aws-sigv4` transform: signs Bedrock requests with the credentials named in the provider YAML.
import { GatewayError } from '../http/errors.ts';
import { signSigV4 } from '../formats/bedrock/sigv4.ts';
import type { UpstreamRequestParts } from './index.ts';

export function signAwsSigV4(req: UpstreamRequestParts, o: Record<string, string>): Record<string, string> {
  if (!o.access_key_id || !o.secret_access_key) {
    throw new GatewayError('upstream_error', 'the provider has no AWS credentials configured (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)', { status: 500 });
  }
  return signSigV4({
    method: req.method, url: req.url, headers: req.headers, body: req.body,
    region: o.region ?? 'us-east-1', service: o.service ?? 'bedrock',
    accessKeyId: o.access_key_id, secretAccessKey: o.secret_access_key,
    ...(o.session_token ? { sessionToken: o.session_token } : {}),
  });
}
