// AWS Signature Version 4 for header-signed requests (Bedrock runtime and any non-S3 service).
// Pure: the caller supplies the clock; the function returns the headers to add to the request.
import { createHash, createHmac } from 'node:crypto';

export type SigV4Request = {
  method: string;
  url: string;
  /** Headers that will be sent as given; each is signed (except the unsafe ones below). */
  headers: Record<string, string>;
  body: Uint8Array | string;
  region: string;
  service: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  now?: Date;
  /** Send and sign x-amz-content-sha256 (default true; AWS's published test vectors omit it). */
  contentSha256Header?: boolean;
};

/** Headers an intermediary or the HTTP client may rewrite; signing them would break the signature. */
const UNSIGNED = new Set(['authorization', 'connection', 'content-length', 'expect', 'keep-alive', 'transfer-encoding', 'user-agent']);

const sha256Hex = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: Uint8Array | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** RFC 3986 percent-encoding as AWS defines it: only A-Z a-z 0-9 - _ . ~ stay literal. */
export const awsUriEncode = (s: string): string =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Canonical URI for every service but S3: the path as sent (already percent-encoded) is
 * normalised (empty, `.` and `..` segments resolved) and each segment encoded once more, so a
 * Bedrock model id `a:b` sent as `a%3Ab` is signed as `a%253Ab`.
 */
export function canonicalUri(path: string): string {
  const segments: string[] = [];
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') segments.pop();
    else segments.push(awsUriEncode(seg));
  }
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : '';
  return `/${segments.join('/')}${trailing}`;
}

/** Query parameters encoded and sorted by name, then value. */
export function canonicalQuery(search: string): string {
  const pairs: Array<[string, string]> = [];
  for (const [k, v] of new URLSearchParams(search)) pairs.push([awsUriEncode(k), awsUriEncode(v)]);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

/** `20150830T123600Z` */
const amzDateOf = (d: Date): string => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

/** Returns authorization, x-amz-date, and (when applicable) x-amz-content-sha256 and x-amz-security-token. */
export function signSigV4(req: SigV4Request): Record<string, string> {
  const url = new URL(req.url);
  const amzDate = amzDateOf(req.now ?? new Date());
  const day = amzDate.slice(0, 8);
  const payloadHash = sha256Hex(req.body);

  const added: Record<string, string> = { 'x-amz-date': amzDate };
  if (req.contentSha256Header !== false) added['x-amz-content-sha256'] = payloadHash;
  if (req.sessionToken !== undefined) added['x-amz-security-token'] = req.sessionToken;

  const signed = new Map<string, string>();
  for (const [name, value] of Object.entries(req.headers)) {
    const lower = name.toLowerCase();
    if (!UNSIGNED.has(lower)) signed.set(lower, value.trim().replace(/\s+/g, ' '));
  }
  if (!signed.has('host')) signed.set('host', url.host);
  for (const [name, value] of Object.entries(added)) signed.set(name, value);
  const names = [...signed.keys()].sort();
  const signedHeaders = names.join(';');

  const canonicalRequest = [
    req.method.toUpperCase(), canonicalUri(url.pathname), canonicalQuery(url.search),
    names.map((n) => `${n}:${signed.get(n)}\n`).join(''), signedHeaders, payloadHash,
  ].join('\n');
  const scope = `${day}/${req.region}/${req.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${req.secretAccessKey}`, day), req.region), req.service), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');

  return {
    ...added,
    authorization: `AWS4-HMAC-SHA256 Credential=${req.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}
