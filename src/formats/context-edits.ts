// Anthropic context editing applied by the gateway: a target without server-side context management
// gets the history already edited (old thinking and old tool results cleared) as Anthropic would.
// Pure: the canonical request is left untouched; edited turns are copies.
import type { Block, CanonicalRequest, ContextEdit, Message } from './canonical.ts';
import { isRecord } from './errors.ts';
import { argumentsText } from './tool-arguments.ts';

/** Anthropic's defaults for clear_tool_uses_20250919 (platform docs, context editing). */
const DEFAULT_TRIGGER_TOKENS = 100_000;
const DEFAULT_KEEP_TOOL_USES = 3;
/** What a cleared tool result says instead, so the model knows something was there. */
export const CLEARED_RESULT = '[tool result cleared to save context]';

/** `context_management.edits` of a Messages body -> canonical edits (shapes validated earlier). */
export function parseContextEdits(cm: unknown): ContextEdit[] {
  const edits = isRecord(cm) && Array.isArray(cm.edits) ? cm.edits : [];
  return edits.filter(isRecord).map((e): ContextEdit => {
    if (e.type === 'clear_thinking_20251015') {
      const keep = e.keep === 'all' || (isRecord(e.keep) && e.keep.type === 'all') ? 'all'
        : isRecord(e.keep) && typeof e.keep.value === 'number' ? e.keep.value : 1;
      return { type: 'clear_thinking', keep };
    }
    if (e.type === 'clear_tool_uses_20250919') {
      const out: Extract<ContextEdit, { type: 'clear_tool_uses' }> = { type: 'clear_tool_uses' };
      if (isRecord(e.trigger) && typeof e.trigger.value === 'number') {
        out.trigger = { type: e.trigger.type === 'tool_uses' ? 'tool_uses' : 'input_tokens', value: e.trigger.value };
      }
      if (isRecord(e.keep) && typeof e.keep.value === 'number') out.keep = e.keep.value;
      if (isRecord(e.clear_at_least) && typeof e.clear_at_least.value === 'number') out.clear_at_least = e.clear_at_least.value;
      if (Array.isArray(e.exclude_tools)) out.exclude_tools = e.exclude_tools.map(String);
      if (typeof e.clear_tool_inputs === 'boolean' || Array.isArray(e.clear_tool_inputs)) {
        out.clear_tool_inputs = Array.isArray(e.clear_tool_inputs) ? e.clear_tool_inputs.map(String) : e.clear_tool_inputs;
      }
      return out;
    }
    return { type: 'other', name: String(e.type) };
  });
}

/** The documented estimate the triggers use: about 4 characters per token over all prompt text. */
export function estimatePromptTokens(req: CanonicalRequest, messages: readonly Message[]): number {
  let chars = 0;
  for (const s of req.system) chars += s.text.length;
  for (const t of req.tools ?? []) chars += t.name.length + (t.description?.length ?? 0) + JSON.stringify(t.input_schema).length;
  for (const m of messages) for (const b of m.content) chars += blockChars(b);
  return Math.ceil(chars / 4);
}

function blockChars(b: Block): number {
  switch (b.type) {
    case 'text': return b.text.length;
    case 'thinking': return b.thinking.length;
    case 'tool_use': return argumentsText(b).length;
    case 'tool_result': return b.content.reduce((n, c) => n + (c.type === 'text' ? c.text.length : 0), 0);
    default: return 0;
  }
}

/** Keeps the thinking of the last `keep` assistant turns that have any; strips it from older ones. */
function clearThinking(messages: Message[], keep: number | 'all'): { messages: Message[]; cleared: number } {
  if (keep === 'all') return { messages, cleared: 0 };
  let seen = 0; let cleared = 0;
  const out = messages.slice();
  for (let i = out.length - 1; i >= 0; i--) {
    const m = out[i]!;
    if (m.role !== 'assistant' || !m.content.some(isThinking)) continue;
    if (seen++ < keep) continue;
    out[i] = { role: m.role, content: m.content.filter((b) => !isThinking(b)) };
    cleared++;
  }
  return { messages: out, cleared };
}

const isThinking = (b: Block): boolean => b.type === 'thinking' || b.type === 'redacted_thinking';

/**
 * Once the trigger is passed, replaces the results of all but the last `keep` tool uses (oldest
 * first, excluded tools never) with a placeholder, and the calls' inputs when asked; nothing is
 * cleared when that would free fewer than `clear_at_least` tokens.
 */
function clearToolUses(req: CanonicalRequest, messages: Message[], e: Extract<ContextEdit, { type: 'clear_tool_uses' }>): { messages: Message[]; cleared: number } {
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
  const trigger = e.trigger ?? { type: 'input_tokens', value: DEFAULT_TRIGGER_TOKENS };
  const measure = trigger.type === 'tool_uses' ? names.size : estimatePromptTokens(req, messages);
  if (measure <= trigger.value) return { messages, cleared: 0 };
  const excluded = new Set(e.exclude_tools ?? []);
  const results: Array<{ id: string; chars: number }> = [];
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_result') results.push({ id: b.tool_use_id, chars: blockChars(b) });
  const clearable = results.slice(0, Math.max(0, results.length - (e.keep ?? DEFAULT_KEEP_TOOL_USES)))
    .filter((r) => !excluded.has(names.get(r.id) ?? ''));
  const freed = Math.ceil(clearable.reduce((n, r) => n + r.chars, 0) / 4);
  if (clearable.length === 0 || (e.clear_at_least !== undefined && freed < e.clear_at_least)) return { messages, cleared: 0 };
  const ids = new Set(clearable.map((r) => r.id));
  const inputs = e.clear_tool_inputs;
  const clearInput = (name: string): boolean => inputs === true || (Array.isArray(inputs) && inputs.includes(name));
  const out = messages.map((m): Message => {
    if (!m.content.some((b) => (b.type === 'tool_result' && ids.has(b.tool_use_id)) || (b.type === 'tool_use' && ids.has(b.id) && clearInput(b.name)))) return m;
    return {
      role: m.role,
      content: m.content.map((b): Block => {
        if (b.type === 'tool_result' && ids.has(b.tool_use_id)) return { ...b, content: [{ type: 'text', text: CLEARED_RESULT }] };
        if (b.type === 'tool_use' && ids.has(b.id) && clearInput(b.name)) return { ...b, input: {} };
        return b;
      }),
    };
  });
  return { messages: out, cleared: ids.size };
}

/**
 * The history with the request's context edits applied, and one adjustment per edit saying what it
 * did. Edits the gateway cannot perform (server-side compaction needs the model) are dropped.
 */
export function applyContextEdits(req: CanonicalRequest): { messages: Message[]; adjustments: string[] } {
  let messages = req.messages;
  const adjustments: string[] = [];
  (req.context_edits ?? []).forEach((e, i) => {
    const at = `context_management.edits[${i}]`;
    if (e.type === 'clear_thinking') {
      const r = clearThinking(messages, e.keep);
      messages = r.messages;
      adjustments.push(`${at}=clear_thinking(applied by gateway: ${r.cleared} turns)`);
    } else if (e.type === 'clear_tool_uses') {
      const r = clearToolUses(req, messages, e);
      messages = r.messages;
      adjustments.push(`${at}=clear_tool_uses(applied by gateway: ${r.cleared} results)`);
    } else {
      adjustments.push(`${at}=${e.name}(dropped: needs server-side context)`);
    }
  });
  if (req.context_management !== undefined && (req.context_edits ?? []).length === 0) adjustments.push('context_management=dropped(no edits)');
  return { messages, adjustments };
}
