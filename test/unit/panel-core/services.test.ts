// Reconciler single flight and status text, system config defaults and updates, system info parsing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readMemory, readOsName, collectSystemInfo } from '../../../panel/services/system-info.ts';
import { ReconcileBusyError, ReconcilerStatus } from '../../../panel/services/reconciler-status.ts';
import { SystemConfigService } from '../../../panel/services/system-config.ts';
import { openDatabase } from '../../../panel/store/db.ts';
import { SettingsRepository } from '../../../panel/store/repositories/settings.ts';

describe('ReconcilerStatus', () => {
  it('runs one reconcile at a time and describes it', async () => {
    const status = new ReconcilerStatus();
    assert.equal(status.text(), null);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const isStarted = new Promise<void>((r) => (started = r));
    const first = status.run(async (progress) => {
      progress(1, 4);
      started();
      await gate;
      progress(4, 4);
    });
    await isStarted;
    assert.equal(status.running, true);
    assert.equal(status.text(), 'Loading (1/4)');
    await assert.rejects(status.run(async () => undefined), ReconcileBusyError);
    release();
    await first;
    assert.equal(status.text(), null);
    await assert.rejects(status.run(() => {
      throw new Error('sync throw');
    }), /sync throw/);
    assert.equal(status.text(), 'Error: reconcile failed: sync throw');
    await status.whenIdle();
    await status.run(async () => undefined);
    assert.equal(status.text(), null);
  });
});

describe('SystemConfigService', () => {
  it('answers defaults, merges updates, resets, ignores junk stored values', () => {
    const db = openDatabase(':memory:');
    const settings = new SettingsRepository(db);
    const service = new SystemConfigService(settings);
    assert.deepEqual(service.get(), { traffic_statistics_frequency: 5, traffic_statistics_history: 2, wireguard_handshake_uptime: 180 });
    assert.deepEqual(service.update({ wireguard_handshake_uptime: 60 }), { traffic_statistics_frequency: 5, traffic_statistics_history: 2, wireguard_handshake_uptime: 60 });
    settings.set('system_config', { traffic_statistics_frequency: 'x', traffic_statistics_history: 3 });
    assert.deepEqual(service.get(), { traffic_statistics_frequency: 5, traffic_statistics_history: 3, wireguard_handshake_uptime: 180 });
    assert.deepEqual(service.reset(), { traffic_statistics_frequency: 5, traffic_statistics_history: 2, wireguard_handshake_uptime: 180 });
    db.close();
  });
});

describe('system info', () => {
  it('parses /proc/meminfo and /etc/os-release', () => {
    const meminfo = 'MemTotal:        2048000 kB\nMemFree:          100000 kB\nMemAvailable:     512000 kB\n';
    assert.deepEqual(readMemory(meminfo), { total: 2048000 * 1024, available: 512000 * 1024 });
    assert.deepEqual(readMemory('MemTotal: 1000 kB\nMemFree: 10 kB\n'), { total: 1024000, available: 10240 });
    assert.equal(readOsName('NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'), 'Debian GNU/Linux 12 (bookworm)');
    assert.equal(readOsName("NAME='Alpine'\nVERSION=3.19\n"), 'Alpine 3.19');
    assert.ok(readOsName(null).length > 0);
  });

  it('collects strings, falling back when the files are missing', () => {
    const info = collectSystemInfo({ meminfoPath: '/nonexistent/meminfo', osReleasePath: '/nonexistent/os-release' });
    for (const [field, value] of Object.entries(info)) assert.equal(typeof value, 'string', field);
    assert.ok(Number(info.memory_total) > 0);
    assert.match(info.memory_used_percent, /^\d+\.\d{2}$/);
    assert.match(info.cpu_used_load1, /^\d+\.\d{2}$/);
  });
});
