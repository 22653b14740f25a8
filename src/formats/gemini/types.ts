// Gemini generateContent wire types (v1beta REST, camelCase JSON), and the one place where
// untrusted upstream JSON is narrowed into them.

export type GeminiPart = {
  text?: string;
  /** Marks a thought-summary part (only present when thinkingConfig.includeThoughts is set). */
  thought?: boolean;
  /** Opaque signature of the model's reasoning; may ride on any part, not only thought parts. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
};

export type GeminiContent = { role: 'user' | 'model'; parts: GeminiPart[] };

export type GeminiThinkingConfig = { thinkingBudget?: number; includeThoughts?: boolean };

export type GeminiGenerationConfig = {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
  frequencyPenalty?: number;
  presencePenalty?: number;
  seed?: number;
};

export type GeminiFunctionDeclaration = { name: string; description?: string; parametersJsonSchema: Record<string, unknown> };

export type GeminiRequest = {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  generationConfig?: GeminiGenerationConfig;
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
};

export type GeminiUsage = {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
};

export type GeminiResponse = {
  parts: GeminiPart[];
  finishReason?: string;
  blockReason?: string;
  usage?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
  /** Set when the body is an error envelope (Gemini can put one mid-stream). */
  error?: { code?: number; message: string; status?: string };
};

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const optStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const optNum = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function parsePart(v: unknown): GeminiPart | null {
  if (!isRecord(v)) return null;
  const p: GeminiPart = {};
  if (typeof v.text === 'string') p.text = v.text;
  if (v.thought === true) p.thought = true;
  if (typeof v.thoughtSignature === 'string' && v.thoughtSignature !== '') p.thoughtSignature = v.thoughtSignature;
  const fc = v.functionCall;
  if (isRecord(fc) && typeof fc.name === 'string') {
    p.functionCall = { name: fc.name, args: isRecord(fc.args) ? fc.args : {} };
    const id = optStr(fc.id);
    if (id) p.functionCall.id = id;
  }
  const inline = v.inlineData;
  if (isRecord(inline) && typeof inline.data === 'string') {
    p.inlineData = { mimeType: optStr(inline.mimeType) ?? 'application/octet-stream', data: inline.data };
  }
  return p;
}

function parseUsage(v: unknown): GeminiUsage | undefined {
  if (!isRecord(v)) return undefined;
  const u: GeminiUsage = {};
  for (const k of ['promptTokenCount', 'candidatesTokenCount', 'cachedContentTokenCount', 'thoughtsTokenCount',
    'toolUsePromptTokenCount', 'totalTokenCount'] as const) {
    const n = optNum(v[k]);
    if (n !== undefined) u[k] = n;
  }
  return u;
}

/**
 * Narrows one GenerateContentResponse (a whole body, or one alt=sse chunk) to what the codec
 * reads: the first candidate only, since the gateway never asks for candidateCount > 1.
 */
export function parseGeminiResponse(body: unknown): GeminiResponse {
  const root = Array.isArray(body) ? body[0] : body;
  if (!isRecord(root)) return { parts: [] };
  if (isRecord(root.error)) {
    const e = root.error;
    const error: NonNullable<GeminiResponse['error']> = { message: optStr(e.message) ?? 'upstream error' };
    const code = optNum(e.code);
    if (code !== undefined) error.code = code;
    const status = optStr(e.status);
    if (status !== undefined) error.status = status;
    return { parts: [], error };
  }
  const out: GeminiResponse = { parts: [] };
  const cand = Array.isArray(root.candidates) ? root.candidates[0] : undefined;
  if (isRecord(cand)) {
    const content = cand.content;
    if (isRecord(content) && Array.isArray(content.parts)) {
      for (const raw of content.parts) {
        const p = parsePart(raw);
        if (p) out.parts.push(p);
      }
    }
    const fr = optStr(cand.finishReason);
    if (fr !== undefined) out.finishReason = fr;
  }
  if (isRecord(root.promptFeedback)) {
    const br = optStr(root.promptFeedback.blockReason);
    if (br !== undefined) out.blockReason = br;
  }
  const usage = parseUsage(root.usageMetadata);
  if (usage) out.usage = usage;
  const mv = optStr(root.modelVersion);
  if (mv !== undefined) out.modelVersion = mv;
  const rid = optStr(root.responseId);
  if (rid !== undefined) out.responseId = rid;
  return out;
}
