// The request body the Router page's dry run ("Try the router", pages/router-preview.ts) sends for its
// form: pure, so the tests run it without a browser.

export type PreviewForm = { prompt: string; wtp: string; maxCost: string; maxCostPerMillion: string; models: string };

/**
 * The chat-completions body the form describes. An empty field is left out; a number field holding
 * something else is sent as written, so the gateway's 400 names the field as it would for a client.
 */
export function previewBody(f: PreviewForm): Record<string, unknown> {
  const body: Record<string, unknown> = { model: 'router', messages: [{ role: 'user', content: f.prompt }] };
  const number = (name: string, text: string): void => {
    const t = text.trim();
    if (t === '') return;
    const x = Number(t);
    body[name] = Number.isFinite(x) ? x : t;
  };
  number('willingness_to_pay', f.wtp);
  number('max_cost', f.maxCost);
  number('max_cost_per_million_tokens', f.maxCostPerMillion);
  const models = f.models.split(/[\s,]+/).filter((m) => m !== '');
  if (models.length > 0) body.models = models;
  return body;
}
