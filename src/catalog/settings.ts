// `catalog:` in gateway.yaml (schema/gateway.schema.json), compiled: the live refresh's schedule,
// sources, timeouts and endpoints. Read per tick by the refresher, so a reload applies it.

export type RefreshSourceName = 'providers' | 'openrouter' | 'models.dev';

export type CatalogSettings = {
  refresh: {
    /** Refresh periodically in the server. */
    enabled: boolean;
    intervalMs: number;
    sources: RefreshSourceName[];
    /** Per HTTP request. */
    timeoutMs: number;
    /** How often a replica looks for a newer overlay in the store. */
    pollMs: number;
    openrouterUrl: string;
    modelsDevUrl: string;
  };
};

export const DEFAULT_OPENROUTER_URL = 'https://openrouter.ai/api/v1/models';
export const DEFAULT_MODELS_DEV_URL = 'https://models.dev/api.json';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? v as Obj : {});

/** Compiles the validated `catalog` section (absent: refresh off, every source, the defaults above). */
export function compileCatalogSettings(raw: unknown): CatalogSettings {
  const r = obj(obj(raw).refresh);
  return {
    refresh: {
      enabled: r.enabled === true,
      intervalMs: Math.round(((r.interval_minutes as number | undefined) ?? 360) * 60_000),
      sources: (r.sources as RefreshSourceName[] | undefined) ?? ['providers', 'openrouter', 'models.dev'],
      timeoutMs: (r.timeout_ms as number | undefined) ?? 15_000,
      pollMs: Math.round(((r.poll_seconds as number | undefined) ?? 30) * 1000),
      openrouterUrl: (r.openrouter_url as string | undefined) ?? DEFAULT_OPENROUTER_URL,
      modelsDevUrl: (r.models_dev_url as string | undefined) ?? DEFAULT_MODELS_DEV_URL,
    },
  };
}
