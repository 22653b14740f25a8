// The Gemini generateContent codec (upstream side only: clients never speak Gemini to the gateway).
// Base URL is expected to end in /v1beta; the API key header comes from the provider's config.
import type { Codec } from '../codec.ts';
import { decodeGeminiError, decodeGeminiResponse } from './decode.ts';
import { encodeGeminiRequest } from './encode.ts';
import { newGeminiStreamDecoder } from './stream.ts';

export const geminiCodec: Codec = {
  format: 'gemini',
  upstream: {
    encodeRequest: encodeGeminiRequest,
    decodeResponse: decodeGeminiResponse,
    newStreamDecoder: newGeminiStreamDecoder,
    decodeError: decodeGeminiError,
  },
};
