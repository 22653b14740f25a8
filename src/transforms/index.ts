// Named request transforms referenced from provider YAML (config never holds code).
// A transform signs or decorates the final upstream request; see aws-sigv4.ts.
import { signAwsSigV4 } from './aws-sigv4.ts';

/** `body` is the JSON text, or its UTF-8 bytes when a worker encoded it. */
export type UpstreamRequestParts = { method: string; url: string; headers: Record<string, string>; body: string | Buffer };

/** Returns headers to add to the request. */
export type RequestTransform = (req: UpstreamRequestParts, options: Record<string, string>) => Record<string, string>;

export const TRANSFORMS: Record<string, RequestTransform> = {
  'aws-sigv4': signAwsSigV4,
};

export const TRANSFORM_NAMES: readonly string[] = Object.keys(TRANSFORMS);
