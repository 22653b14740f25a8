// Hot reload: watch the config files, debounce, read + parse + validate on a worker thread, compile here,
// swap one reference. In-flight requests keep the snapshot they started with; a bad change keeps the old
// config serving; each reload names the settings it changed and those that need a restart.
import { lstatSync, readlinkSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { Worker } from 'node:worker_threads';
import { compileConfig } from './compile.ts';
import { configVersion, overlayProblems, type CatalogOverlay } from '../catalog/overlay.ts';
import { ConfigError, loadConfig, type ConfigProblem, type RawConfig } from './load.ts';
import { changedSettings, restartRequired } from './live-settings.ts';
import type { Config } from './types.ts';
import type { Env } from './env.ts';
import type { UnsetVariable } from './env-warnings.ts';

export type ReloadResult =
  | {
    ok: true; changed: boolean; version: string;
    /** Settings whose value changed in this reload (names as in gateway.yaml). */
    settings: string[];
    /** Restart-only settings whose configured value differs from the running one (see live-settings.ts). */
    restartRequired: string[];
    /** This load's unset `${VAR}` references (env-warnings.ts), changed or not: the listener in serve.ts prints them. */
    unsetVariables: UnsetVariable[];
  }
  | { ok: false; error: string };

type Pending = { ok: (raw: RawConfig) => void; fail: (e: Error) => void };

/**
 * The config loader thread: one, started on the first reload and kept (it keeps ajv's compiled schemas
 * warm). Reading and validating the repository's 37 files took 140-300 ms of the event loop.
 */
class LoaderThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  /** The thread has exited (crashed, out of memory, terminated): a message to it would never be answered. */
  dead = false;

  constructor() {
    this.#worker = new Worker(new URL('../workers/config-load.ts', import.meta.url));
    this.#worker.unref();
    this.#worker.on('message', (m: { id: number; json?: string; problems?: ConfigProblem[] | null; files?: string[]; message?: string }) => {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (m.json !== undefined) p.ok(JSON.parse(m.json) as RawConfig);
      else p.fail(m.problems ? new ConfigError(m.problems, m.files) : new Error(m.message ?? 'config load failed'));
    });
    const failAll = (e: Error): void => { for (const p of this.#pending.values()) p.fail(e); this.#pending.clear(); };
    this.#worker.on('error', failAll);
    this.#worker.on('exit', (code) => { this.dead = true; failAll(new Error(`config loader thread exited (${code})`)); });
  }

  /**
   * Reads and validates the files on the thread. A load that does not answer within `timeoutMs` (a
   * file that blocks on read: a FIFO, a hung network mount) fails, and the thread, stuck in it, is
   * given up (dead): reloads are serialised, so waiting on it would stop every later one.
   */
  load(file: string, env: Env, timeoutMs: number): Promise<RawConfig> {
    const id = this.#next++;
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => {
        if (!this.#pending.delete(id)) return;
        this.dead = true;
        void this.#worker.terminate();
        fail(new Error(`reading ${file} and the files it names did not finish within ${timeoutMs} ms (a file that blocks on read, such as a FIFO or a hung mount?); a new loader thread takes the next reload`));
      }, timeoutMs);
      timer.unref();
      const done = <T>(f: (v: T) => void) => (v: T): void => { clearTimeout(timer); f(v); };
      this.#pending.set(id, { ok: done(ok), fail: done(fail) });
      this.#worker.postMessage({ id, file, env: { ...env } });
    });
  }

  close(): Promise<number> { return this.#worker.terminate(); }
}

/** Debounce periods after a burst's first change by which a reload happens even while changes go on. */
const BURST_LIMIT = 10;

export class ConfigHolder {
  #current: Config;
  /** The config the process started with: restart-only settings keep these values. */
  readonly #started: Config;
  #file: string;
  #env: Env;
  #watchers: FSWatcher[] = [];
  #watchedFiles = new Set<string>();
  /** The links the watched files resolve through and the files they reach (see linkChain): a change of either reloads. */
  #followed = new Set<string>();
  /** The directories watched: an event naming one of them (replaced, deleted, created) reloads. */
  #dirs = new Set<string>();
  #watchedDirs = '';
  /** The files a refused reload named (ConfigError.files), watched too until a reload succeeds. */
  #refusedFiles: string[] = [];
  #debounceMs = 200;
  #timer: NodeJS.Timeout | null = null;
  /** When the first change of the burst the timer is waiting out was seen (ms, monotonic). */
  #burstStart = 0;
  #loader: LoaderThread | null = null;
  /** How long a reload waits for the loader thread to read and validate the files. */
  loadTimeoutMs = 30_000;
  #reloading: Promise<ReloadResult> | null = null;
  #closed = false;
  #queued: Promise<ReloadResult> | null = null;
  lastError: { at: string; message: string } | null = null;
  /** Restart-only settings changed in the files since start (names only); empty when none. */
  restartRequired: string[] = [];
  readonly listeners = new Set<(r: ReloadResult, cfg: Config) => void>();
  /** The first load's unset `${VAR}` references (the start's warnings; a reload's come in its result). */
  readonly unsetVariables: UnsetVariable[];

  /** Loads once, synchronously (nothing is served yet); throws ConfigError when the initial config is invalid. */
  constructor(file: string, env: Env = process.env) {
    this.#file = file;
    this.#env = env;
    const raw = loadConfig(file, env);
    this.unsetVariables = raw.warnings;
    this.#current = compileConfig(raw, env);
    this.#started = this.#current;
  }

  /** The snapshot a request should use from start to finish. */
  get current(): Config { return this.#current; }

  /** The catalog refresh overlay compiled into every snapshot (src/catalog/overlay.ts), or null. */
  #overlay: CatalogOverlay | null = null;
  get catalogOverlay(): CatalogOverlay | null { return this.#overlay; }

  /**
   * Publishes a newer catalog overlay through the normal reload path (files read, validated, compiled
   * with it). An overlay whose patches are not model facts is refused before; one the reload refuses is
   * not kept (it would be compiled into every later reload, refusing the operator's edits too): the
   * refresher offers it again at its next poll.
   */
  async setCatalogOverlay(overlay: CatalogOverlay | null): Promise<ReloadResult> {
    const problems = overlay ? overlayProblems(overlay) : [];
    if (overlay && problems.length > 0) {
      const shown = problems.slice(0, 10).concat(problems.length > 10 ? [`... and ${problems.length - 10} more`] : []);
      return this.#finish(this.#failed(new Error(`catalog overlay v${overlay.version} refused:\n${shown.join('\n')}`)));
    }
    const before = this.#overlay;
    this.#overlay = overlay;
    const r = await this.reload();
    if (!r.ok && this.#overlay === overlay) this.#overlay = before;
    return r;
  }

  /**
   * Reads and validates the files on the loader thread, compiles here and swaps the snapshot. Calls
   * during a reload are coalesced into one more reload after it (a file may change meanwhile).
   */
  reload(): Promise<ReloadResult> {
    if (this.#closed) return Promise.resolve(this.#failed(new Error('the gateway is stopping')));
    // A call during a reload gets the next one: the running one may have read the files before the change the caller made.
    if (this.#reloading) {
      const at = this.#current;
      this.#queued ??= this.#reloading.then(() => { this.#queued = null; return this.reload(); });
      // The running reload may already have compiled the caller's change (a catalog overlay is read at
      // compile time): the caller hears "changed" against the config it called under, not against the one
      // the running reload left.
      return this.#queued.then((r) => (r.ok && !r.changed && r.version !== at.version
        ? { ...r, changed: true, settings: changedSettings(at, this.#current) } : r));
    }
    this.#reloading = this.#reloadOnce().finally(() => { this.#reloading = null; });
    return this.#reloading;
  }

  async #reloadOnce(): Promise<ReloadResult> {
    let raw: RawConfig;
    try {
      // A loader thread that died (out of memory, say) is replaced: waiting on it would hang this reload and every later one.
      if (this.#loader?.dead) this.#loader = null;
      this.#loader ??= new LoaderThread();
      raw = await this.#loader.load(this.#file, this.#env, this.loadTimeoutMs);
    } catch (e) {
      // Stopping: the loader thread was terminated under this load; nothing was refused, so nothing is reported.
      if (this.#closed) return this.#failed(new Error('the gateway is stopping'));
      // The refused config's files are watched as well: the edit that fixes it may be to a file the
      // running config never read (router.priors_file pointed at one not written yet, say).
      this.#refusedFiles = e instanceof ConfigError ? e.files : [];
      return this.#finish(this.#failed(e));
    }
    // The JSON.parse of the loader's answer ran in this macrotask: compile in the next one, so the loop
    // serves what is waiting between the two instead of stalling for both.
    await new Promise((r) => setImmediate(r));
    return this.apply(raw);
  }

  /**
   * The main thread's part of a reload: compiles documents already read and validated (by the loader
   * thread, or by a caller holding loadConfig's result), swaps the snapshot and tells the listeners.
   */
  apply(raw: RawConfig): ReloadResult {
    let result: ReloadResult;
    try {
      const version = configVersion(raw.hash, this.#overlay);
      if (version === this.#current.version) {
        result = { ok: true, changed: false, version, settings: [], restartRequired: this.restartRequired, unsetVariables: raw.warnings };
      } else {
        const next = compileConfig(raw, this.#env, this.#overlay);
        const settings = changedSettings(this.#current, next);
        this.restartRequired = restartRequired(this.#started, next);
        this.#current = this.#withRunningValues(next);
        result = { ok: true, changed: true, version, settings, restartRequired: this.restartRequired, unsetVariables: raw.warnings };
      }
      this.lastError = null;
    } catch (e) {
      result = this.#failed(e);
    }
    return this.#finish(result);
  }

  #failed(e: unknown): ReloadResult {
    this.lastError = { at: new Date().toISOString(), message: (e as Error).message };
    return { ok: false, error: (e as Error).message };
  }

  #finish(result: ReloadResult): ReloadResult {
    for (const l of this.listeners) {
      // A listener must never stop the others, nor turn a reload into an unhandled rejection.
      try { l(result, this.#current); } catch (e) { console.error('config reload listener failed:', e); }
    }
    // A refused reload adds its files to the watched set; a good one (changed or not) sets it back to the
    // running config's. Every reload rewatches (a no-op when no directory changed): a swapped link (a
    // ConfigMap's ..data) may leave the files' text as it was and their directories moved.
    if (result.ok) this.#refusedFiles = [];
    if (this.#watchers.length > 0) this.#rewatch();
    return result;
  }

  /** Restart-only settings keep their running values in the snapshot, so no code reads a value not in force. */
  #withRunningValues(next: Config): Config {
    if (this.restartRequired.length === 0) return next;
    const s = this.#started;
    return {
      ...next,
      server: { ...next.server, host: s.server.host, port: s.server.port },
      storage: {
        ...next.storage, sqlitePath: s.storage.sqlitePath, databaseUrl: s.storage.databaseUrl, redisUrl: s.storage.redisUrl,
        redisFailOpen: s.storage.redisFailOpen,
      },
      dashboard: { ...next.dashboard, enabled: s.dashboard.enabled, tailPollMs: s.dashboard.tailPollMs },
    };
  }

  /**
   * Watches the files the config was read from (gateway.yaml, providers/*.yaml, the catalogs they
   * include) and new provider files, debounced. Directories are watched one level deep, never
   * recursively: the project root holds node_modules and data/, whose churn must not cost a reload.
   * Editors replace files by rename, so a directory watch (filtered by name) follows them where a
   * file watch would go stale.
   */
  watch(debounceMs = 200): void {
    this.#debounceMs = debounceMs;
    this.#rewatch(true);
  }

  /** The set of files a change of which triggers a reload (for tests and the log). */
  get watchedFiles(): ReadonlySet<string> { return this.#watchedFiles; }

  #rewatch(force = false): void {
    const cfg = this.#current;
    const files = new Set([this.#file, ...cfg.files, ...this.#refusedFiles]);
    const followed = new Set<string>();
    for (const f of files) for (const p of linkChain(f)) followed.add(p);
    // The providers directory's parent too: a directory swapped by rename, or deleted and created again,
    // shows there as a change of the directory's own entry.
    const dirs = new Set([...files, ...followed].map((f) => dirname(f)).concat(cfg.providersDir, dirname(cfg.providersDir)));
    // By inode as well as path: a watch follows the directory it was opened on, not one that took its name.
    const key = [...dirs].sort().map((d) => `${d}\0${inodeOf(d)}`).join('\n');
    this.#watchedFiles = files;
    this.#followed = followed;
    this.#dirs = dirs;
    if (!force && key === this.#watchedDirs) return;
    this.#unwatch();
    this.#watchedDirs = key;
    for (const d of dirs) {
      try {
        const w = watch(d, (_ev, name) => {
          if (!name) return;
          const full = join(d, String(name));
          const relevant = this.#watchedFiles.has(full) || this.#followed.has(full) || this.#dirs.has(full) || (d === this.#current.providersDir && /\.ya?ml$/.test(String(name)));
          if (!relevant) return;
          this.#changed();
        });
        w.on('error', () => { /* directory vanished: the next SIGHUP or change reports it */ });
        this.#watchers.push(w);
      } catch { /* unwatchable directory: SIGHUP still reloads */ }
    }
  }

  /**
   * A change: reload once changes have paused for the debounce, but at most BURST_LIMIT debounce
   * periods after the first change of the burst, so a file written continuously (a log mistakenly
   * placed beside the config, a sync tool rewriting every second) cannot postpone a reload for good.
   */
  #changed(): void {
    const now = performance.now();
    if (this.#timer) clearTimeout(this.#timer);
    else this.#burstStart = now;
    const due = Math.min(now + this.#debounceMs, this.#burstStart + this.#debounceMs * BURST_LIMIT);
    this.#timer = setTimeout(() => { this.#timer = null; void this.reload(); }, Math.max(0, due - now));
  }

  #unwatch(): void {
    for (const w of this.#watchers) w.close();
    this.#watchers = [];
    this.#watchedDirs = '';
  }

  /** Applies reload.watch and reload.debounce_ms from a new config: starts, re-times or stops watching. */
  setWatch(enabled: boolean, debounceMs: number): void {
    if (!enabled) { this.#unwatch(); return; }
    if (this.#watchers.length === 0 || debounceMs !== this.#debounceMs) this.watch(debounceMs);
  }

  get watching(): boolean { return this.#watchers.length > 0; }

  close(): void {
    this.#closed = true;
    this.#unwatch();
    if (this.#timer) clearTimeout(this.#timer);
    void this.#loader?.close();
    this.#loader = null;
  }
}

/** A directory's inode, or "missing". */
function inodeOf(dir: string): string {
  try { return String(statSync(dir).ino); } catch { return 'missing'; }
}

/**
 * The symlinks met resolving `file` (a link in any component, followed to its target) and the file
 * reached, or just the links met before a missing component. A Kubernetes ConfigMap mount links each
 * file through `..data`, which the kubelet swaps by rename: that swap, and an edit of the file a link
 * points to, happen in directories a watch of the link's own directory never sees.
 */
export function linkChain(file: string): string[] {
  const out: string[] = [];
  const parts = resolve(file).split(sep).filter(Boolean);
  let at: string = sep;
  for (let hops = 0; parts.length > 0;) {
    const next = join(at, parts.shift()!);
    let link: string;
    try {
      if (!lstatSync(next).isSymbolicLink()) { at = next; continue; }
      link = readlinkSync(next);
    } catch { return out; }
    if (++hops > 40) return out;
    out.push(next);
    parts.unshift(...resolve(at, link).split(sep).filter(Boolean));
    at = sep;
  }
  if (out.length > 0) out.push(at);
  return out;
}
