// `HOST:PORT` of a listening address (IPv6 in brackets): what `--listen` and the demo's `--*-listen` flags take.

/** Parses `HOST:PORT` (IPv6 in brackets, port 0-65535); throws naming the value otherwise. */
export function parseListen(listen: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new Error(`--listen must be HOST:PORT, got '${listen}'`);
  return { host: match[1] ?? match[2], port };
}
