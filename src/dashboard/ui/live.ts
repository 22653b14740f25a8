// Keeps a page's data current while someone looks at it: another admin's change shows without a reload
// of the page. The data is loaded again when the tab becomes visible again or the window regains focus,
// and every `everyMs` while the tab is visible; never while it is hidden, and never two loads at once.

/** Focus and visibility often change together (switching back to the tab): one load answers both. */
const SETTLE_MS = 2000;

/**
 * Calls `reload` on those occasions until the returned function is called (the page is left). A load
 * still running when the next is due is not doubled: the next waits for its own occasion.
 */
export function whileVisible(reload: () => Promise<void>, everyMs: number): () => void {
  let timer: ReturnType<typeof setInterval> | null = null;
  let running = false;
  // The page has just loaded its data.
  let lastStart = performance.now();
  const run = (): void => {
    if (running) return;
    running = true;
    lastStart = performance.now();
    void reload().finally(() => { running = false; });
  };
  const poll = (): void => { if (document.visibilityState === 'visible') run(); };
  const start = (): void => { timer ??= setInterval(poll, everyMs); };
  const stop = (): void => { if (timer !== null) clearInterval(timer); timer = null; };
  const back = (): void => {
    if (document.visibilityState !== 'visible' || performance.now() - lastStart < SETTLE_MS) return;
    // The next poll comes a whole period after this load.
    stop();
    start();
    run();
  };
  const onVisibility = (): void => { if (document.visibilityState === 'visible') back(); else stop(); };
  document.addEventListener('visibilitychange', onVisibility);
  window.addEventListener('focus', back);
  if (document.visibilityState === 'visible') start();
  return () => {
    stop();
    document.removeEventListener('visibilitychange', onVisibility);
    window.removeEventListener('focus', back);
  };
}
