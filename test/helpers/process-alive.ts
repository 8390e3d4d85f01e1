// Whether a pid names a live process, for tests of daemons the code under test starts and stops.
import { readFileSync } from 'node:fs';

/** True when `/proc/<pid>` exists and is not a zombie (in containers no init may reap the orphans a test leaves). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
