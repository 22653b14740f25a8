// Polling for a condition a test waits on (a reload, a watcher's event): true once it holds, false if
// it still does not after `ms`.

/** Checks `what` every 20 ms until it holds or `ms` pass; returns whether it holds. */
export async function until(what: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!what() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return what();
}
