// Host facts for GET /system/info from node:os, /proc/meminfo and /etc/os-release; every value is a string.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { SystemInfo } from '../../shared/wire/system.ts';

/** Where the facts are read from (tests point these at fixtures). */
export interface SystemInfoSources {
  meminfoPath?: string;
  osReleasePath?: string;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** `{ total, available }` in bytes from /proc/meminfo (falls back to node:os). */
export function readMemory(meminfo: string | null): { total: number; available: number } {
  const kib = (name: string) => {
    const match = meminfo ? new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(meminfo) : null;
    return match ? Number(match[1]) * 1024 : null;
  };
  const total = kib('MemTotal') ?? os.totalmem();
  const available = kib('MemAvailable') ?? kib('MemFree') ?? os.freemem();
  return { total, available };
}

/** PRETTY_NAME (else NAME VERSION) of an os-release file, or `os.type() os.release()`. */
export function readOsName(osRelease: string | null): string {
  const value = (key: string) => {
    const match = osRelease ? new RegExp(`^${key}=(.*)$`, 'm').exec(osRelease) : null;
    return match ? match[1].trim().replace(/^(["'])(.*)\1$/, '$2') : null;
  };
  return value('PRETTY_NAME') ?? ([value('NAME'), value('VERSION')].filter(Boolean).join(' ') || `${os.type()} ${os.release()}`);
}

/** Collects SystemInfo now. */
export function collectSystemInfo(sources: SystemInfoSources = {}): SystemInfo {
  const cpus = os.cpus();
  const [load1, load5, load15] = os.loadavg();
  const { total, available } = readMemory(readText(sources.meminfoPath ?? '/proc/meminfo'));
  const used = Math.max(0, total - available);
  return {
    cpu_model: cpus[0]?.model?.trim() || 'unknown',
    cpu_threads: String(cpus.length || os.availableParallelism()),
    cpu_used_load1: load1.toFixed(2),
    cpu_used_load5: load5.toFixed(2),
    cpu_used_load15: load15.toFixed(2),
    hostname: os.hostname(),
    memory_free: String(available),
    memory_total: String(total),
    memory_used: String(used),
    memory_used_percent: total > 0 ? ((used / total) * 100).toFixed(2) : '0.00',
    os_architecture: os.machine(),
    os_name: readOsName(readText(sources.osReleasePath ?? '/etc/os-release')),
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  };
}
