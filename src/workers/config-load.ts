// Worker entry of ConfigHolder's reload (src/config/reload.ts): reads, parses and validates the config
// files here, off the event loop that serves requests, and answers with the raw documents (plain data)
// or the problems found. Compiling (closures, indexes) stays on the main thread: it takes a few ms.
import { parentPort } from 'node:worker_threads';
import { ConfigError, loadConfig } from '../config/load.ts';
import type { Env } from '../config/env.ts';
import { nameThread } from './thread-name.ts';

nameThread('gw-config');

parentPort!.on('message', (m: { id: number; file: string; env: Env }) => {
  try {
    // One JSON string: cloning a string is a copy, while structured clone rebuilt the documents' object
    // graph (780 catalog models) on the main thread, costing more than JSON.parse does there.
    parentPort!.postMessage({ id: m.id, json: JSON.stringify(loadConfig(m.file, m.env)) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, problems: e instanceof ConfigError ? e.problems : null, files: e instanceof ConfigError ? e.files : [], message: (e as Error).message });
  }
});
