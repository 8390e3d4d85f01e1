// CPU time of this process and of its descendants by command name (Linux /proc; utime + stime, 10 ms ticks), so a
// bench can print CPU per unit of work next to its rates: on a shared machine the rates move with the load, the CPU
// a unit of work costs much less.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU milliseconds by command name: `self` for this process, the others for its live descendants (empty off Linux). */
export function cpuByProcess(): Map<string, number> {
  const procs = new Map<number, { ppid: number; comm: string; ms: number }>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return new Map();
  }
  for (const pid of entries) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(pid), { ppid: Number(fields[1]), comm, ms: (Number(fields[11]) + Number(fields[12])) * 10 });
    } catch {
      // the process ended meanwhile
    }
  }
  const byName = new Map<string, number>();
  for (const [pid, proc] of procs) {
    let name: string | null = pid === process.pid ? 'self' : null;
    for (let up = proc.ppid; name === null && up > 1; up = procs.get(up)?.ppid ?? 0) if (up === process.pid) name = proc.comm;
    if (name !== null) byName.set(name, (byName.get(name) ?? 0) + proc.ms);
  }
  return byName;
}

/** What each process spent between `before` and `after`, per `units`, as `name 1.2 ms` items (largest first, > 0). */
export function cpuPerUnit(before: Map<string, number>, after: Map<string, number>, units: number): string {
  return [...after].map(([name, ms]) => [name, (ms - (before.get(name) ?? 0)) / units] as const)
    .filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]).map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ');
}
