// Test helper: a strict parser of wg-quick client text that checks every key and value the way wg/wg-quick would.
import assert from 'node:assert/strict';
import { isValidKey } from '../../../panel/dataplane/keys.ts';
import { parseCidr, parseIp } from '../../../panel/schemas/ip.ts';

/** One section of a parsed configuration. */
export interface WgQuickSection {
  section: 'Interface' | 'Peer';
  entries: Map<string, string>;
}

const KNOWN: Record<WgQuickSection['section'], Set<string>> = {
  Interface: new Set(['PrivateKey', 'Address', 'DNS', 'MTU', 'ListenPort']),
  Peer: new Set(['PublicKey', 'AllowedIPs', 'Endpoint', 'PersistentKeepalive', 'PresharedKey']),
};

/** Parses wg-quick text into sections, failing on unknown keys, duplicate keys and values wg would refuse. */
export function parseWgQuick(text: string): WgQuickSection[] {
  const out: WgQuickSection[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[(Interface|Peer)\]$/.exec(line);
    if (header) {
      out.push({ section: header[1] as WgQuickSection['section'], entries: new Map() });
      continue;
    }
    const kv = /^([A-Za-z]+)\s*=\s*(.+)$/.exec(line);
    assert.ok(kv, `not a key = value line: ${line}`);
    const current = out[out.length - 1];
    assert.ok(current, 'key before any section');
    assert.ok(KNOWN[current.section].has(kv[1]), `unknown key ${kv[1]} in [${current.section}]`);
    assert.ok(!current.entries.has(kv[1]), `duplicate key ${kv[1]}`);
    current.entries.set(kv[1], kv[2]);
    checkValue(kv[1], kv[2]);
  }
  return out;
}

function list(value: string): string[] {
  return value.split(',').map((s) => s.trim());
}

function checkValue(key: string, value: string): void {
  switch (key) {
    case 'PrivateKey':
    case 'PublicKey':
      assert.ok(isValidKey(value), `${key} is not a WireGuard key`);
      break;
    case 'Address':
    case 'AllowedIPs':
      for (const item of list(value)) assert.ok(parseCidr(item), `${key}: ${item} is not CIDR`);
      break;
    case 'DNS':
      for (const item of list(value)) assert.ok(parseIp(item), `DNS: ${item} is not an address`);
      break;
    case 'MTU':
    case 'PersistentKeepalive': {
      assert.match(value, /^\d+$/);
      assert.ok(Number(value) >= 1 && Number(value) <= 65535, `${key} out of range`);
      break;
    }
    case 'Endpoint': {
      const m = /^(\[[0-9a-f:]+\]|[^:[\]]+):(\d+)$/i.exec(value);
      assert.ok(m, `Endpoint ${value} is not host:port`);
      assert.ok(Number(m[2]) >= 1 && Number(m[2]) <= 65535, 'Endpoint port out of range');
      break;
    }
  }
}
