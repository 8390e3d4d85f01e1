// The shipped systemd units: they parse, start an existing entry with flags the CLI accepts, restart on failure,
// name their data directory and environment file; `systemd-analyze verify` finds nothing to complain about.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { requireTools } from '../helpers/require-tools.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const UNITS = join(ROOT, 'bin/systemd');
/** Where docs/operations.md tells operators to put the project. */
const INSTALL_DIR = '/opt/vpnhost';

type Unit = Record<string, Record<string, string[]>>;

/** `[Section]` → key → values (a key may repeat); comments and blank lines skipped. */
function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      section = header[1];
      assert.equal(unit[section], undefined, `section ${section} twice`);
      unit[section] = {};
      continue;
    }
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    assert.ok(match && section, `not a unit line: ${line}`);
    (unit[section][match[1]] ??= []).push(match[2]);
  }
  return unit;
}

const one = (unit: Unit, section: string, key: string): string => {
  const values = unit[section]?.[key];
  assert.ok(values && values.length === 1, `${section}.${key} set once`);
  return values[0];
};

const units = readdirSync(UNITS).filter((f) => f.endsWith('.service')).sort();

describe('systemd units', () => {
  it('ship one unit for the panel and one for the platform', () => {
    assert.deepEqual(units, ['vpnhost-panel.service', 'vpnhost-platform.service']);
  });

  for (const file of units) {
    const family = file === 'vpnhost-panel.service' ? 'panel' : 'platform';
    it(`${file}: node runs bin/vpnhost.js ${family} serve with accepted flags, restarts on failure, documents data and environment`, async () => {
      const unit = parseUnit(readFileSync(join(UNITS, file), 'utf8'));
      const [node, entry, ...args] = one(unit, 'Service', 'ExecStart').split(/\s+/);
      assert.equal(node, 'node', 'node directly, never npx');
      assert.equal(entry, `${INSTALL_DIR}/bin/vpnhost.js`);
      assert.ok(existsSync(join(ROOT, entry.slice(INSTALL_DIR.length + 1))), 'the entry exists in the project');
      assert.deepEqual(args.slice(0, 2), [family, 'serve']);
      assert.equal(one(unit, 'Service', 'WorkingDirectory'), INSTALL_DIR);
      assert.equal(one(unit, 'Service', 'Restart'), 'on-failure');
      assert.equal(one(unit, 'Install', 'WantedBy'), 'multi-user.target');
      const state = one(unit, 'Service', 'StateDirectory');
      assert.equal(state, `vpnhost/${family}`);
      assert.equal(args[args.indexOf('--data') + 1], `/var/lib/${state}`, '--data is the state directory');
      assert.equal(one(unit, 'Service', 'StateDirectoryMode'), '0700');
      assert.equal(one(unit, 'Service', 'EnvironmentFile'), `-/etc/vpnhost/${family}.env`);
      // The CLI's strict parser accepts the unit's flags (an unknown flag fails before --help is honoured).
      const help = await execa(process.execPath, [join(ROOT, 'bin/vpnhost.js'), ...args, '--help'], { cwd: ROOT, reject: false, timeout: 60_000, stdin: 'ignore' });
      assert.equal(help.exitCode, 0, `${args.join(' ')} --help: ${help.stderr}`);
      // Every variable of the example environment file is one the CLI documents.
      const example = readFileSync(join(UNITS, `${family}.env.example`), 'utf8');
      const names = [...example.matchAll(/^#?(VPNHOST_[A-Z_]+)=/gm)].map((m) => m[1]);
      assert.ok(names.length >= 3, 'the example names the settings');
      for (const name of names) assert.match(help.stdout, new RegExp(`\\b${name}\\b`), `${name} is documented by --help`);
    });
  }

  it('systemd-analyze verify accepts both units (paths pointed at this checkout and this node)', async (t) => {
    if (!requireTools(t, ['systemd-analyze'])) return;
    const dir = mkdtempSync(join(tmpdir(), 'vpnhost-units-'));
    try {
      for (const file of units) {
        const text = readFileSync(join(UNITS, file), 'utf8')
          .replaceAll(INSTALL_DIR, ROOT.replace(/\/$/, ''))
          .replace(/^ExecStart=node /m, `ExecStart=${process.execPath} `);
        writeFileSync(join(dir, file), text);
      }
      const result = await execa('systemd-analyze', ['verify', ...units.map((f) => join(dir, f))], { reject: false, timeout: 60_000 });
      assert.equal(result.exitCode, 0, result.stderr);
      assert.equal(result.stderr.trim(), '', 'no warnings (unknown keys, bad values)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
