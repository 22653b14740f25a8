// Background failures (a writer, a poller, Redis sharing) repeat every few hundred milliseconds while
// a dependency is down: an outage must show in the log without flooding it. One line per subject at
// once, then at most one per interval, saying how many were held back in between.

/** A logger that writes a subject's first error at once and then at most one line per `intervalMs`. */
export function throttledLog(write: (line: string) => void = (l) => console.error(l), intervalMs = 10_000): (subject: string, message: string) => void {
  const last = new Map<string, { at: number; held: number }>();
  return (subject, message) => {
    const now = Date.now();
    const s = last.get(subject);
    if (s && now - s.at < intervalMs) { s.held++; return; }
    write(`${subject}: ${message}${s && s.held > 0 ? ` (${s.held} more since the last line)` : ''}`);
    last.set(subject, { at: now, held: 0 });
  };
}
