// AWS credentials from the standard chain, as the AWS SDKs resolve them: environment variables,
// the shared credentials and config files (profile, credential_process), the container
// credentials endpoint (ECS, EKS Pod Identity), then instance metadata (IMDSv2). Every source is read
// asynchronously (files, the credential process and the endpoints never hold the event loop); the
// chain caches what it found and refreshes it in the background five minutes before it expires.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type AwsCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiresAt?: number; source: string };
export type Env = Record<string, string | undefined>;

/** Refreshed this long before they expire (the AWS SDKs' window). */
export const REFRESH_BEFORE_MS = 5 * 60_000;
const HTTP_TIMEOUT_MS = 1000;
/** A credential_process gets this long (the AWS CLI waits without a limit; a request must not). */
const PROCESS_TIMEOUT_MS = 5000;

/** `[section]` -> key -> value, for the shared credentials and config files. */
export function parseIni(text: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  let cur: Map<string, string> | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s+|\s+$/g, '');
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const sec = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (sec) { cur = new Map(); out.set(sec[1]!, cur); continue; }
    const eq = line.indexOf('=');
    if (cur && eq > 0) cur.set(line.slice(0, eq).trim().toLowerCase(), line.slice(eq + 1).trim());
  }
  return out;
}

const readText = async (file: string): Promise<string> => { try { return await readFile(file, 'utf8'); } catch { return ''; } };

/** Runs a credential_process command line (as the SDKs do, through the shell) and returns its output. */
function runProcess(command: string, env: Env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', command], { encoding: 'utf8', timeout: PROCESS_TIMEOUT_MS, env: env as NodeJS.ProcessEnv, maxBuffer: 1 << 20 }, (err, out) => {
      if (err) reject(new Error(`credential_process failed: ${err.killed ? `no answer within ${PROCESS_TIMEOUT_MS} ms` : err.message.split('\n')[0]}`));
      else resolve(out);
    });
  });
}
const expiry = (v: unknown): { expiresAt?: number } => {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? { expiresAt: t } : {};
};

/** Credentials JSON as the container endpoint, IMDS and credential_process return them. */
function fromJson(j: Record<string, unknown>, source: string): AwsCredentials | null {
  const id = j.AccessKeyId; const secret = j.SecretAccessKey;
  if (typeof id !== 'string' || typeof secret !== 'string' || id === '' || secret === '') return null;
  const token = j.Token ?? j.SessionToken;
  return { accessKeyId: id, secretAccessKey: secret, ...(typeof token === 'string' && token !== '' ? { sessionToken: token } : {}), ...expiry(j.Expiration), source };
}

/** AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN, AWS_CREDENTIAL_EXPIRATION). */
function fromEnv(env: Env): AwsCredentials | null {
  const id = env.AWS_ACCESS_KEY_ID; const secret = env.AWS_SECRET_ACCESS_KEY;
  if (!id || !secret) return null;
  return { accessKeyId: id, secretAccessKey: secret, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}), ...expiry(env.AWS_CREDENTIAL_EXPIRATION), source: 'environment' };
}

/**
 * The profile (AWS_PROFILE, else `default`) from ~/.aws/credentials (`[name]`) and ~/.aws/config
 * (`[profile name]`, `[default]`), paths overridable by AWS_SHARED_CREDENTIALS_FILE and
 * AWS_CONFIG_FILE: static keys, or a credential_process whose JSON output is used.
 */
async function fromProfile(env: Env, profile: string): Promise<AwsCredentials | null> {
  const home = env.HOME || homedir();
  const [credsText, configText] = await Promise.all([
    readText(env.AWS_SHARED_CREDENTIALS_FILE || join(home, '.aws', 'credentials')), readText(env.AWS_CONFIG_FILE || join(home, '.aws', 'config')),
  ]);
  const creds = parseIni(credsText).get(profile);
  const config = parseIni(configText).get(profile === 'default' ? 'default' : `profile ${profile}`);
  for (const [section, where] of [[creds, 'credentials file'], [config, 'config file']] as const) {
    if (!section) continue;
    const id = section.get('aws_access_key_id'); const secret = section.get('aws_secret_access_key');
    if (id && secret) {
      const token = section.get('aws_session_token');
      return { accessKeyId: id, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}), source: `profile ${profile} (${where})` };
    }
    const proc = section.get('credential_process');
    if (proc) {
      const out = await runProcess(proc, env);
      let j: unknown;
      try { j = JSON.parse(out); } catch { throw new Error('credential_process printed no JSON'); }
      if (j === null || typeof j !== 'object') throw new Error('credential_process printed no JSON object');
      return fromJson(j as Record<string, unknown>, `profile ${profile} (credential_process)`);
    }
  }
  return null;
}

/**
 * The sources that need no network: environment, then the profile's files. A named profile (the
 * YAML `profile` option or AWS_PROFILE) skips the environment keys, as the AWS SDK for JavaScript does.
 */
export async function resolveLocal(env: Env, profile?: string): Promise<AwsCredentials | null> {
  const named = profile || env.AWS_PROFILE;
  return (named ? null : fromEnv(env)) ?? fromProfile(env, named || 'default');
}

async function fetchJson(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
}

/** ECS / EKS Pod Identity: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI (+ authorization token). */
async function fromContainer(env: Env): Promise<AwsCredentials | null> {
  const rel = env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI;
  const full = env.AWS_CONTAINER_CREDENTIALS_FULL_URI;
  if (!rel && !full) return null;
  const url = rel ? `http://169.254.170.2${rel}` : full!;
  const u = new URL(url);
  // As the SDKs do: plain http only to loopback or the container hosts.
  if (u.protocol === 'http:' && !/^(127\.\d+\.\d+\.\d+|localhost|\[::1\]|169\.254\.170\.2|169\.254\.170\.23|\[fd00:ec2::23\])$/.test(u.hostname)) {
    throw new Error(`AWS_CONTAINER_CREDENTIALS_FULL_URI ${url} is plain http to a host other than loopback or the container endpoint`);
  }
  const token = env.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE ? (await readText(env.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE)).trim() : env.AWS_CONTAINER_AUTHORIZATION_TOKEN;
  const r = await fetchJson(url, { headers: token ? { authorization: token } : {} });
  if (!r.ok) throw new Error(`container credentials endpoint answered ${r.status}`);
  return fromJson(await r.json() as Record<string, unknown>, 'container credentials endpoint');
}

/**
 * Whether this environment names an AWS credential source without fetching anything: keys in the
 * environment, a profile (AWS_PROFILE), a container endpoint, a shared credentials or config file
 * on disk, or instance metadata declared as the source (AWS_EC2_METADATA_DISABLED=false: an EC2
 * instance role cannot be detected without a request to the metadata endpoint).
 */
export function namesCredentialSource(env: Env, exists: (path: string) => boolean = existsSync): boolean {
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) return true;
  if (env.AWS_PROFILE || env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI || env.AWS_CONTAINER_CREDENTIALS_FULL_URI) return true;
  if ((env.AWS_EC2_METADATA_DISABLED ?? '').toLowerCase() === 'false') return true;
  const home = env.HOME || homedir();
  return exists(env.AWS_SHARED_CREDENTIALS_FILE || join(home, '.aws', 'credentials')) || exists(env.AWS_CONFIG_FILE || join(home, '.aws', 'config'));
}

/** EC2 instance metadata, IMDSv2 (session token first); AWS_EC2_METADATA_DISABLED=true turns it off. */
async function fromImds(env: Env): Promise<AwsCredentials | null> {
  if ((env.AWS_EC2_METADATA_DISABLED ?? '').toLowerCase() === 'true') return null;
  const base = (env.AWS_EC2_METADATA_SERVICE_ENDPOINT || 'http://169.254.169.254').replace(/\/+$/, '');
  const t = await fetchJson(`${base}/latest/api/token`, { method: 'PUT', headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' } });
  if (!t.ok) throw new Error(`instance metadata token request answered ${t.status}`);
  const headers = { 'x-aws-ec2-metadata-token': await t.text() };
  const roles = await fetchJson(`${base}/latest/meta-data/iam/security-credentials/`, { headers });
  if (!roles.ok) return null; // no instance role
  const role = (await roles.text()).split('\n')[0]!.trim();
  if (role === '') return null;
  const c = await fetchJson(`${base}/latest/meta-data/iam/security-credentials/${encodeURIComponent(role)}`, { headers });
  if (!c.ok) throw new Error(`instance metadata credentials answered ${c.status}`);
  return fromJson(await c.json() as Record<string, unknown>, `instance role ${role}`);
}

/** The sources behind an HTTP endpoint, in chain order. */
export async function resolveRemote(env: Env): Promise<AwsCredentials | null> {
  return (await fromContainer(env)) ?? (await fromImds(env));
}

