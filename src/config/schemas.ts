// The published JSON Schemas (schema/*.json), compiled once with ajv.
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

const dir = new URL('../../schema/', import.meta.url);
const load = (name: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));

type Kind = 'gateway' | 'provider' | 'catalog' | 'priors' | 'patch';
let compiled: Record<Kind, ValidateFunction> | null = null;

/**
 * A catalog overlay's model patch (src/catalog/overlay.ts): a catalog model whose fields are all
 * optional but the name, pricing, capabilities and modalities patched field by field.
 */
function patchSchema(catalog: Record<string, unknown>): Record<string, unknown> {
  type Schema = Record<string, unknown> & { properties: Record<string, Record<string, unknown>> };
  const defs = structuredClone(catalog.definitions) as Record<string, Schema>;
  const partial = (s: Record<string, unknown>): Record<string, unknown> => { const { required: _r, ...rest } = s; return rest; };
  // The model's if/then/else requires every field of a live record: a patch names only what it changes.
  const { if: _if, then: _then, else: _else, ...model } = defs.model!;
  defs.patchPricing = partial(defs.pricing!) as Schema;
  defs.patch = {
    ...model, required: ['name'],
    properties: {
      ...model.properties, pricing: { $ref: '#/definitions/patchPricing' },
      capabilities: partial(model.properties.capabilities!), modalities: partial(model.properties.modalities!),
    },
  };
  return { $id: 'catalog-patch.schema.json', definitions: defs, $ref: '#/definitions/patch' };
}

export function validatorFor(kind: Kind): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const catalog = load('catalog.schema.json');
    ajv.addSchema(catalog, 'catalog.schema.json');
    compiled = {
      gateway: ajv.compile(load('gateway.schema.json')),
      provider: ajv.compile(load('provider.schema.json')),
      catalog: ajv.getSchema('catalog.schema.json')!,
      priors: ajv.compile(load('priors.schema.json')),
      patch: ajv.compile(patchSchema(catalog)),
    };
  }
  return compiled[kind];
}
