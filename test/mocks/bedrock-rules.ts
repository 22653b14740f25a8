// What Bedrock Converse refuses, checked by the mock before it answers: turn order, tool blocks
// without toolConfig or without their calls, model-specific request fields on the wrong model
// family, Claude's thinking rules and signatures as Bedrock relays them ("The model returned the following
// errors: ..."). Answered as ValidationException.
import { anthropicModel, removedSamplingProblem } from './anthropic-rules.ts';
import { signatureIssuer } from './text.ts';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

const FIELDS = new Set(['messages', 'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields',
  'promptVariables', 'additionalModelResponseFieldPaths', 'requestMetadata', 'performanceConfig', 'outputConfig', 'serviceTier']);
const INFERENCE_FIELDS = new Set(['maxTokens', 'temperature', 'topP', 'stopSequences']);

const model = (text: string): string => `The model returned the following errors: ${text}`;
const isClaude = (id: string): boolean => /anthropic\.|claude/.test(id);
const isNova = (id: string): boolean => /amazon\.nova/.test(id);

function turnProblems(messages: Json[], hasToolConfig: boolean): string | null {
  if (messages[0]?.role !== 'user') return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  for (const [i, m] of messages.entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return `1 validation error detected: Value '${String(m.role)}' at 'messages.${i + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`;
    if (i > 0 && messages[i - 1]!.role === m.role) return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    const content = list(m.content);
    // Even on a final turn that offers no tools: reported across clients (vercel/ai#7537,
    // pydantic/pydantic-ai#1966, langchain-ai/langchain-aws#591, anomalyco/opencode#10259).
    if (!hasToolConfig && content.some((c) => c.toolUse !== undefined || c.toolResult !== undefined)) {
      return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
    }
    for (const [j, c] of content.entries()) {
      const block = c.toolUse !== undefined ? 'toolUse' : c.toolResult !== undefined ? 'toolResult' : null;
      const id = block === null ? '' : String(obj(c[block]).toolUseId);
      if (block !== null && !/^[a-zA-Z0-9_-]{1,64}$/.test(id)) {
        return `1 validation error detected: Value '${id}' at 'messages.${i + 1}.member.content.${j + 1}.member.${block}.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+`;
      }
    }
    const results = content.filter((c) => c.toolResult !== undefined).map((c) => String(obj(c.toolResult).toolUseId));
    if (results.length > 0) {
      const calls = new Set(list(messages[i - 1]?.content).filter((c) => c.toolUse !== undefined).map((c) => String(obj(c.toolUse).toolUseId)));
      if (results.some((id) => !calls.has(id))) return `The number of toolResult blocks at messages.${i}.content exceeds the number of toolUse blocks of previous turn.`;
    }
  }
  return null;
}

/** Claude's thinking rules, in Converse's field names. */
function claudeThinking(b: Json, modelId: string, messages: Json[]): string | null {
  const extra = obj(b.additionalModelRequestFields);
  const t = obj(extra.thinking);
  if (t.type === undefined || t.type === 'disabled') return null;
  if (!anthropicModel(modelId).thinking) return model(`${modelId} does not support thinking.`);
  const ic = obj(b.inferenceConfig);
  if (t.type === 'enabled') {
    if (typeof t.budget_tokens !== 'number' || t.budget_tokens < 1024) return model('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (typeof ic.maxTokens !== 'number' || t.budget_tokens >= ic.maxTokens) return model('`max_tokens` must be greater than `thinking.budget_tokens`.');
  }
  if (ic.temperature !== undefined && ic.temperature !== 1) return model('`temperature` may only be set to 1 when thinking is enabled.');
  if (extra.top_k !== undefined) return model('`top_k` must be unset when thinking is enabled.');
  const choice = obj(obj(b.toolConfig).toolChoice);
  if (choice.any !== undefined || choice.tool !== undefined) return model('Thinking may not be enabled when tool_choice forces tool use.');
  const last = messages.at(-1);
  if (last?.role === 'user' && list(last.content).some((c) => c.toolResult !== undefined)) {
    const assistant = messages.at(-2);
    const first = list(assistant?.content)[0];
    if (first && first.reasoningContent === undefined) {
      return model('messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.');
    }
  }
  return null;
}

/** The ValidationException message for a request Converse refuses, or null. */
export function bedrockRequestProblem(b: Json, modelId: string): string | null {
  for (const k of Object.keys(b)) if (!FIELDS.has(k)) return `1 validation error detected: Unknown field '${k}'`;
  for (const k of Object.keys(obj(b.inferenceConfig))) if (!INFERENCE_FIELDS.has(k)) return `1 validation error detected: Unknown field 'inferenceConfig.${k}'`;
  const messages = list(b.messages);
  // Tool names: [a-zA-Z0-9_-]+, 1 to 64 characters.
  for (const [i, t] of list(obj(b.toolConfig).tools).entries()) {
    const name = obj(t.toolSpec).name;
    if (typeof name !== 'string') continue;
    const at = `Value '${name}' at 'toolConfig.tools.${i + 1}.member.toolSpec.name' failed to satisfy constraint`;
    if (name.length > 64) return `1 validation error detected: ${at}: Member must have length less than or equal to 64`;
    if (!/^[a-zA-Z0-9_-]+$/.test(name)) return `1 validation error detected: ${at}: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+`;
  }
  const turns = turnProblems(messages, list(obj(b.toolConfig).tools).length > 0);
  if (turns) return turns;
  const extra = obj(b.additionalModelRequestFields);
  for (const k of Object.keys(extra)) {
    const ok = isClaude(modelId) ? ['thinking', 'top_k', 'output_config', 'anthropic_beta'].includes(k)
      : isNova(modelId) ? ['reasoningConfig', 'inferenceConfig'].includes(k) : false;
    if (!ok) return model(`Malformed input request: extraneous key [${k}] is not permitted, please reformat your input and try again.`);
  }
  if (isClaude(modelId)) {
    // Claude's signatures (Anthropic's and Bedrock's are one family) and no one else's.
    for (const [i, m] of messages.entries()) {
      for (const [j, c] of list(m.content).entries()) {
        const sig = obj(obj(c.reasoningContent).reasoningText).signature;
        if (sig !== undefined && signatureIssuer(String(sig)) !== 'anthropic') return model(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
      }
    }
    const ic = obj(b.inferenceConfig);
    const removed = removedSamplingProblem(modelId, { temperature: ic.temperature, top_p: ic.topP, top_k: extra.top_k });
    if (removed) return model(removed.replaceAll('`', ''));
    const max = ic.maxTokens;
    const limit = anthropicModel(modelId).maxOutput;
    if (typeof max === 'number' && max > limit) return model(`max_tokens: ${max} > ${limit}, which is the maximum allowed number of output tokens for ${modelId}`);
    return claudeThinking(b, modelId, messages);
  }
  return null;
}
