// Named request transforms referenced from provider YAML (config never holds code).
// A transform signs or decorates the final upstream request; see aws-sigv4.ts.
import { awsSigV4 } from './aws-sigv4.ts';

/** `body` is the JSON text, or its UTF-8 bytes when a worker encoded it. */
export type UpstreamRequestParts = { method: string; url: string; headers: Record<string, string>; body: string | Buffer };

export type RequestTransform = {
  /** Headers to add to the request. Synchronous: it uses only what ready() made available (a GatewayError when that is missing). */
  apply(req: UpstreamRequestParts, options: Record<string, string>): Record<string, string>;
  /**
   * null when apply() can run now (the usual case: nothing to await). Else a promise to await first,
   * which rejects with a GatewayError when the transform cannot be applied (no credentials to be had).
   */
  ready?(options: Record<string, string>): Promise<void> | null;
  /** Starts loading what apply() needs, in the background (at start and on every config reload). */
  warm?(options: Record<string, string>): void;
  /**
   * Whether the options and the environment name credentials the transform can sign with (no
   * fetching: config compilation asks it). Absent: always. The router routes only to providers that can.
   */
  mayAuthenticate?(options: Record<string, string>, env: Record<string, string | undefined>): boolean;
};

export const TRANSFORMS: Record<string, RequestTransform> = {
  'aws-sigv4': awsSigV4,
};

export const TRANSFORM_NAMES: readonly string[] = Object.keys(TRANSFORMS);
