// The published JSON Schemas (schema/*.json), compiled once with ajv.
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

const dir = new URL('../../schema/', import.meta.url);
const load = (name: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));

let compiled: Record<'gateway' | 'provider' | 'catalog' | 'priors', ValidateFunction> | null = null;

export function validatorFor(kind: 'gateway' | 'provider' | 'catalog' | 'priors'): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const catalog = load('catalog.schema.json');
    ajv.addSchema(catalog, 'catalog.schema.json');
    compiled = {
      gateway: ajv.compile(load('gateway.schema.json')),
      provider: ajv.compile(load('provider.schema.json')),
      catalog: ajv.getSchema('catalog.schema.json')!,
      priors: ajv.compile(load('priors.schema.json')),
    };
  }
  return compiled[kind];
}
