// Hot reload: watch the config directory, debounce, load + validate + compile, swap one reference.
// In-flight requests keep the snapshot they started with; a bad change keeps the old config serving.
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import { compileConfig } from './compile.ts';
import { loadConfig } from './load.ts';
import type { Config } from './types.ts';
import type { Env } from './env.ts';

export type ReloadResult = { ok: true; changed: boolean; version: string } | { ok: false; error: string };

export class ConfigHolder {
  #current: Config;
  #file: string;
  #env: Env;
  #watchers: FSWatcher[] = [];
  #timer: NodeJS.Timeout | null = null;
  lastError: { at: string; message: string } | null = null;
  readonly listeners = new Set<(r: ReloadResult, cfg: Config) => void>();

  /** Loads once; throws ConfigError when the initial config is invalid. */
  constructor(file: string, env: Env = process.env) {
    this.#file = file;
    this.#env = env;
    this.#current = compileConfig(loadConfig(file, env), env);
  }

  /** The snapshot a request should use from start to finish. */
  get current(): Config { return this.#current; }

  reload(): ReloadResult {
    let result: ReloadResult;
    try {
      const raw = loadConfig(this.#file, this.#env);
      if (raw.hash === this.#current.version) {
        result = { ok: true, changed: false, version: raw.hash };
      } else {
        this.#current = compileConfig(raw, this.#env);
        result = { ok: true, changed: true, version: raw.hash };
      }
      this.lastError = null;
    } catch (e) {
      this.lastError = { at: new Date().toISOString(), message: (e as Error).message };
      result = { ok: false, error: (e as Error).message };
    }
    for (const l of this.listeners) l(result, this.#current);
    return result;
  }

  /** Watches the gateway file's directory and the providers directory (recursively), debounced. */
  watch(debounceMs = 200): void {
    const dirs = new Set([dirname(this.#current.files[0] ?? this.#file), this.#current.providersDir]);
    for (const d of dirs) {
      try {
        const w = watch(d, { recursive: true }, (_ev, name) => {
          if (name && !/\.(ya?ml|json)$/.test(String(name))) return;
          if (this.#timer) clearTimeout(this.#timer);
          this.#timer = setTimeout(() => { this.#timer = null; this.reload(); }, debounceMs);
        });
        w.on('error', () => { /* directory vanished: the next SIGHUP or change reports it */ });
        this.#watchers.push(w);
      } catch { /* unwatchable directory: SIGHUP still reloads */ }
    }
  }

  close(): void {
    for (const w of this.#watchers) w.close();
    this.#watchers = [];
    if (this.#timer) clearTimeout(this.#timer);
  }
}
