// The Bedrock Converse codec (upstream side only). Requests are signed by the `aws-sigv4`
// transform (sigv4.ts); streams are AWS binary event streams (eventstream.ts), not SSE.
import type { Codec } from '../codec.ts';
import { decodeBedrockError, decodeBedrockResponse } from './decode.ts';
import { encodeBedrockRequest } from './encode.ts';
import { newBedrockStreamDecoder } from './stream.ts';

export const bedrockCodec: Codec = {
  format: 'bedrock-converse',
  upstream: {
    encodeRequest: encodeBedrockRequest,
    decodeResponse: decodeBedrockResponse,
    newStreamDecoder: newBedrockStreamDecoder,
    decodeError: decodeBedrockError,
  },
};
