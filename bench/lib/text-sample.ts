// The text sample of the token estimate's benches (bench/token-estimate.ts, bench/reservation-margin.ts):
// this repository's docs and code, the shared router benchmark's prompts (when present), TypeScript's
// diagnostics in 13 languages, and (with emoji: true) 20 emoji texts. Paths from the repository root.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export type Sample = { kind: string; text: string };
export function textSample(o: { emoji?: boolean } = {}): Sample[] {
const samples: Sample[] = [];

/** Cuts a text into pieces of about `size` characters at line breaks (prompts are short texts, not files). */
function pieces(kind: string, text: string, size = 1500): void {
  let cur = '';
  for (const line of text.split('\n')) {
    cur += `${line}\n`;
    if (cur.length >= size) { samples.push({ kind, text: cur }); cur = ''; }
  }
  if (cur.trim().length > 50) samples.push({ kind, text: cur });
}

for (const f of readdirSync('docs')) if (f.endsWith('.md')) pieces('docs', readFileSync(join('docs', f), 'utf8'));
for (const d of ['src/engine', 'src/formats/openai-chat', 'src/catalog']) {
  for (const f of readdirSync(d)) if (f.endsWith('.ts')) pieces('code', readFileSync(join(d, f), 'utf8'));
}
try {
  const lines = readFileSync('../shared/router-bench/routerbench-dev.jsonl', 'utf8').split('\n').filter(Boolean);
  for (let i = 0; i < lines.length; i += 7) samples.push({ kind: 'bench-prompt', text: (JSON.parse(lines[i]!) as { prompt: string }).prompt });
} catch { /* the shared data is optional */ }
const tsLib = 'node_modules/typescript/lib';
for (const lang of readdirSync(tsLib)) {
  let msgs: Record<string, string>;
  try { msgs = JSON.parse(readFileSync(join(tsLib, lang, 'diagnosticMessages.generated.json'), 'utf8')) as Record<string, string>; } catch { continue; }
  const vals = Object.values(msgs);
  for (let i = 0; i + 20 <= Math.min(vals.length, 600); i += 20) samples.push({ kind: `lang:${lang}`, text: vals.slice(i, i + 20).join('\n') });
}
if (o.emoji) for (let i = 0; i < 20; i++) samples.push({ kind: 'emoji', text: emojiText(i) });
return samples;
}

const EMOJI = ['😀', '🎉', '🚀', '🔥', '👍🏽', '❤️', '🧑‍💻', '🌍', '🙏', '✅', '🐱', '🍕', '⚽', '🇯🇵', '👨‍👩‍👧', '🤖', '📈', '💡', '🌸', '🎵'];
/** Emoji text i: runs of emoji (ZWJ sequences, skin tones, flags), from emoji alone to emoji between English words. */
function emojiText(i: number): string {
  let s = '';
  for (let k = 0; k < 120; k++) {
    s += EMOJI[(k * 7 + i * 3) % EMOJI.length]!;
    if (i % 4 === 1 && k % 3 === 2) s += ' ';
    if (i % 4 === 2 && k % 5 === 4) s += ' great job team ';
    if (i % 4 === 3 && k % 10 === 9) s += '\n';
  }
  return s;
}
