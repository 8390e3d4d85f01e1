// Fuzz every registered route (enumerated from the app, so new routes are covered) with random methods, paths,
// cookies and bodies from a seeded PRNG: never a 5xx, never a crash, always the envelope.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { envelope, makeHarness, type Harness } from './panel-core/harness.ts';

const SEED = Number(process.env.VPNHOST_FUZZ_SEED ?? 0x5eed);
const REQUESTS = Number(process.env.VPNHOST_FUZZ_COUNT ?? 3000);

/** mulberry32: small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = [
  'name', 'interface_name', 'listen_port', 'mtu', 'keep_alive', 'allowed_ips', 'endpoint', 'address', 'internal_traffic',
  'external_ip', 'dns_1', 'dns_2', 'ipv6', 'address_ipv6', 'dns_1_ipv6', 'dns_2_ipv6', 'b_download', 'b_upload', 'ikev2',
  'private_key', 'public_key', 'wg_name', 'allowed_IPs', 'allowed_IPs_ipv6', 'status', 'username', 'password',
  'traffic_statistics_frequency', 'traffic_statistics_history', 'wireguard_handshake_uptime', 'dst_port', 'protocol',
  'to_peer', 'to_port', 'enabled', '__proto__', 'constructor', '',
];
const SCALARS = [
  '', '0', '1', '-1', '5', '300', '1440', '1441', '2147483647', '2147483648', '99999999999999999999', '1e3', '0x10', '1.5',
  'abc', 'true', 'false', 'enable', 'disable', 'tcp', 'udp', '10.0.0.2', '10.0.0.2/32', '10.0.0.0/24', '10.66.0.1/24',
  '0.0.0.0/0', '::1', 'fd00::1/64', '::ffff:1.2.3.4', '256.0.0.1', 'wg0', 'wg7', 'wg99999999999999', '51820', '65535', '65536',
  'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', 'not base64!', '🙂', '\u0000', '%00', "' OR 1=1 --", '../../etc/passwd',
  'a'.repeat(300), 'x'.repeat(5000), 'fuzz_srv', 'fuzz_acc', 'name with space', '<script>',
];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'] as const;

type Method = (typeof METHODS)[number];

describe('fuzz', { timeout: 600_000 }, () => {
  it(`${REQUESTS} random requests against every route never answer 5xx and always the envelope`, async () => {
    const h = await makeHarness();
    try {
      const rand = prng(SEED);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
      const routes = h.app.routeTable.filter((r) => r.url.startsWith('/api/v1/'));
      assert.ok(routes.some((r) => r.url === '/api/v1/system/config'), 'system routes enumerated');
      const other = h.app.services.accessHashes.create('192.0.2.50').hash;

      const seed = async () => {
        await h.call('POST', '/api/v1/wireguard', { form: { name: 'fuzz_srv' } });
        const ips = envelope(await h.call('GET', '/api/v1/wireguard/fuzz_srv/available_ips')).msg;
        if (Array.isArray(ips) && ips.length) await h.call('POST', '/api/v1/account', { form: { name: 'fuzz_acc', wg_name: 'fuzz_srv', allowed_IPs: String(ips[0]) } });
      };
      await seed();

      const paramValue = () => pick(['fuzz_srv', 'fuzz_acc', 'nope', '%2e%2e', 'a%2Fb', '%F0%9F%99%82', 'x'.repeat(500), '2024', '13', '0', '-1', 'tcp', '80', '%00', 'wg0']);
      const randomPath = () => {
        const segs = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(['system', 'wireguard', 'account', 'x', '..', '%', '%zz', '', 'config', 'fuzz_srv']));
        return pick(['/api/v1/', '/', '/api/', '/api/v1//']) + segs.join('/') + (rand() < 0.1 ? '?a=1&a=2' : '');
      };
      const fill = (url: string) => url.replace(/:[A-Za-z_]+/g, () => paramValue());

      const body = (): { headers: Record<string, string>; payload?: string } => {
        const r = rand();
        const entries = Array.from({ length: Math.floor(rand() * 6) }, () => [pick(FIELDS), pick(SCALARS)] as const);
        if (r < 0.35) return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: entries.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&') };
        if (r < 0.6) {
          const json: Record<string, unknown> = {};
          for (const [k] of entries) json[k] = pick<unknown>([pick(SCALARS), Number(pick(SCALARS)), rand() < 0.5, null, [pick(SCALARS)], { nested: pick(SCALARS) }, 1e308, -0]);
          return { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(json) };
        }
        if (r < 0.7) return { headers: { 'content-type': 'application/json' }, payload: pick(['{', '[]', '"s"', '1', 'null', '{"a":', '\u0000', '{"a":1}}']) };
        if (r < 0.78) return { headers: { 'content-type': pick(['text/plain', 'application/xml', 'multipart/form-data; boundary=z', 'application/octet-stream', 'application/x-www-form-urlencoded; charset=latin1']) }, payload: pick(SCALARS) };
        if (r < 0.82) return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `${pick(FIELDS)}=1&${pick(FIELDS)}=2&${pick(FIELDS)}=%ZZ&&=&x` };
        return { headers: {} };
      };
      const cookie = () => {
        const r = rand();
        if (r < 0.85) return `access_hash=${h.hash}`;
        return pick([undefined, 'access_hash=', `access_hash=${other}`, `access_hash=${'f'.repeat(80)}`, 'access_hash=%', 'garbage', `access_hash=${h.hash}; access_hash=x`]);
      };

      const seen = new Set<string>();
      const codes = new Map<number, number>();
      for (let i = 0; i < REQUESTS; i++) {
        if (i % 500 === 0) await seed();
        const route = rand() < 0.85 ? pick(routes) : null;
        const url = route ? fill(route.url) : randomPath();
        const method: Method = route && rand() < 0.85 ? (route.method as Method) : pick(METHODS);
        const { headers, payload } = method === 'GET' || method === 'HEAD' ? (rand() < 0.2 ? body() : { headers: {} }) : body();
        const c = cookie();
        if (c !== undefined) headers.cookie = c;
        const res = await h.app.inject({ method, url, headers, payload });
        const label = `#${i} ${method} ${url} ${headers['content-type'] ?? ''} ${String(payload).slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
        assert.ok(res.statusCode < 500, label);
        codes.set(res.statusCode, (codes.get(res.statusCode) ?? 0) + 1);
        if (method === 'HEAD') continue;
        const env = envelope(res);
        if (res.statusCode === 200) {
          assert.equal(env.status, 'success', label);
          assert.equal(env.error, '', label);
        } else {
          assert.equal(env.status, 'error', label);
          assert.ok(env.error.length > 0 && env.msg === '', label);
        }
        seen.add(`${method} ${route?.url ?? 'random'} ${res.statusCode}`);
      }
      const summary = JSON.stringify(Object.fromEntries(codes));
      assert.ok((codes.get(200) ?? 0) > REQUESTS / 10, `enough requests got through validation: ${summary}`);
      for (const code of [400, 401, 404]) assert.ok((codes.get(code) ?? 0) > 0, `some ${code}: ${summary}`);
      const covered = new Set([...seen].map((s) => s.split(' ').slice(0, 2).join(' ')));
      const missed = routes.filter((r) => r.method !== 'HEAD' && !covered.has(`${r.method} ${r.url}`));
      assert.deepEqual(missed, [], 'every route was exercised');
      const after = envelope(await h.call('GET', '/api/v1/system/status'));
      assert.equal(after.status, 'success');
      assert.equal((after.msg as { status: string }).status, 'OK');
    } finally {
      await h.close();
    }
  });
});
