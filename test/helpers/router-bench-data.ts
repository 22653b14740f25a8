// Router-bench data in the shared format, generated: small files with a planted task structure for the
// tests that run the router's quality evaluation (router-bench CLI, the quality benches) without the shared dev data.
function rnd(seed: number) { let s = seed; return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; }; }

const TASKS = {
  cooking: { words: ['simmer', 'onion', 'garlic', 'oven', 'recipe', 'butter', 'flour', 'bake'], acc: { tiny: 0.85, mid: 0.5, big: 0.9, odd: 0.3 } },
  astronomy: { words: ['planet', 'orbit', 'telescope', 'galaxy', 'nebula', 'comet', 'star', 'moon'], acc: { tiny: 0.2, mid: 0.85, big: 0.9, odd: 0.3 } },
  law: { words: ['contract', 'tort', 'statute', 'court', 'appeal', 'plaintiff', 'verdict', 'clause'], acc: { tiny: 0.3, mid: 0.4, big: 0.9, odd: 0.85 } },
} as const;
const PRICE = { tiny: 1e-7, mid: 4e-7, big: 4e-6, odd: 6e-7 } as const;

/** JSONL in the shared format (../shared/router-bench/): three tasks with planted per-model accuracies, four models; `extra` adds a model that only this file has. */
export function generate(n: number, seed: number, prefix: string, extra = false): string {
  const r = rnd(seed);
  const lines: string[] = [];
  const names = Object.keys(TASKS) as Array<keyof typeof TASKS>;
  for (let i = 0; i < n; i++) {
    const task = names[i % names.length]!;
    const t = TASKS[task];
    const prompt = `Question about ${Array.from({ length: 10 + Math.floor(r() * 30) }, () => t.words[Math.floor(r() * t.words.length)]).join(' ')}?`;
    const outcomes: Record<string, { score: number; cost_usd: number }> = {};
    for (const m of Object.keys(PRICE) as Array<keyof typeof PRICE>) {
      outcomes[m] = { score: r() < t.acc[m] ? 1 : 0, cost_usd: PRICE[m] * (prompt.length / 4 + 50) };
    }
    if (extra) outcomes.newcomer = { score: r() < 0.5 ? 1 : 0, cost_usd: PRICE.mid * (prompt.length / 4 + 50) };
    lines.push(JSON.stringify({ id: `${prefix}.${i}`, task, prompt, outcomes }));
  }
  return lines.join('\n') + '\n';
}
