// Traffic logging end to end through the app with a hand-driven flow source: RFC 5424 datagrams on a UDP socket,
// line protocol on an HTTP receiver (token header), and a receiver that is down (capped backlog, fast API, resume).
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { env, makeTlHarness, newFlow, type TlHarness } from './harness.ts';

interface Write {
  url: string;
  auth: string | undefined;
  body: string;
}

/** An HTTP receiver of the v2 write API on 127.0.0.1 (`port` 0 = any); answers 204. */
async function writeReceiver(port = 0): Promise<{ server: Server; port: number; writes: Write[] }> {
  const writes: Write[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      // The client gzips bodies past 1000 bytes (Content-Encoding: gzip), as InfluxDB accepts.
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      writes.push({ url: req.url ?? '', auth: req.headers.authorization, body: body.toString('utf8') });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, writes };
}

async function waitFor(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A server `office` and an account `alice` at 10.0.1.2. */
async function seed(h: TlHarness): Promise<void> {
  assert.equal(env(await h.call('POST', '/api/v1/wireguard', { name: 'office', address: '10.0.1.1/24' })).status, 'success');
  const acc = env(await h.call('POST', '/api/v1/account', { wg_name: 'office', allowed_IPs: '10.0.1.2', name: 'alice' }));
  assert.equal(acc.status, 'success', acc.error);
}

describe('traffic logging pipeline', () => {
  it('ships an account\'s new connection as RFC 5424 over UDP and as line protocol with the token', async () => {
    const h = await makeTlHarness();
    const udp = createSocket('udp4');
    const lines: string[] = [];
    udp.on('message', (m) => lines.push(m.toString('utf8')));
    const tsdb = await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve)).then(() => writeReceiver()).catch(async (err: unknown) => {
      udp.close(); // a failed start leaves no socket open (it would keep the file from exiting)
      await h.close();
      throw err;
    });
    try {
      await seed(h);
      const res = env(await h.call('PUT', '/api/v1/traffic_logging', {
        enabled: '1', enabled_remote_syslog: '1', remote_syslog_server: '127.0.0.1', remote_syslog_server_port: String(udp.address().port),
        enabled_tsdb: '1', tsdb_url: `http://127.0.0.1:${tsdb.port}`, tsdb_token: 'tok-abc-123', tsdb_bucket: 'flows', tsdb_organization: 'acme',
        interface_in: '1', mark: '1',
      }));
      assert.equal(res.status, 'success', res.error);
      h.source.emit(newFlow('10.0.1.2'));
      h.source.emit(newFlow('10.9.9.9')); // no account: not logged
      h.source.emit({ ...newFlow('10.0.1.2'), state: 'established' }); // not selected
      await waitFor('a syslog line and a write', () => lines.length >= 1 && tsdb.writes.length >= 1);
      // Readiness, not a pause: events are filtered as they arrive, so once both shippers are idle nothing else comes.
      const stats = () => h.app.services.trafficLogging.stats();
      await waitFor('both shippers idle', () => stats().length === 2 && stats().every((s) => s.backlog === 0 && s.sent >= 1));
      assert.deepEqual(stats().map((s) => s.sent), [1, 1], 'one record shipped to each sink');
      assert.equal(lines.length, 1);
      assert.equal(
        lines[0].replace(/^(<134>1 \S+ )\S+ (vpnhost-panel )\d+ /, '$1HOST $2PID '),
        '<134>1 2026-11-23T10:00:00.123Z HOST vpnhost-panel PID flow [flow@32473 account="alice" address="10.0.1.2" state="new" ' +
          'direction="out" proto="tcp" src="10.0.1.2" dst="192.0.2.10" sport="40000" dport="443" in="wg0" mark="7"] ' +
          'alice tcp 10.0.1.2:40000 -> 192.0.2.10:443 new',
      );
      assert.equal(tsdb.writes.length, 1);
      const w = tsdb.writes[0];
      assert.equal(w.auth, 'Token tok-abc-123');
      const url = new URL(w.url, 'http://x');
      assert.equal(url.pathname, '/api/v2/write');
      assert.equal(url.searchParams.get('org'), 'acme');
      assert.equal(url.searchParams.get('bucket'), 'flows');
      assert.equal(url.searchParams.get('precision'), 'ms');
      assert.equal(
        w.body.trim(),
        'vpn_flow,account=alice,address=10.0.1.2,direction=out,in=wg0,proto=tcp,state=new count=1i,dport=443i,dst="192.0.2.10",mark=7i,sport=40000i,src="10.0.1.2" 1795428000123'
          .replace('1795428000123', String(Date.parse('2026-11-23T10:00:00.123Z'))),
      );
    } finally {
      await h.close();
      udp.close();
      tsdb.server.close();
    }
  });

  it('a TSDB that is down: the backlog stays within its cap (oldest dropped, counted), the API answers while a send hangs, sending resumes', async () => {
    const h = await makeTlHarness({ cap: 50, batchSize: 20, minRetryMs: 50, maxRetryMs: 200 });
    let tsdb: Awaited<ReturnType<typeof writeReceiver>> | null = null;
    let silent: TcpServer | null = null;
    const held: Socket[] = [];
    try {
      const probe = await writeReceiver();
      const port = probe.port;
      await new Promise<void>((resolve) => probe.server.close(() => resolve())); // nothing listens there now
      await seed(h);
      const res = env(await h.call('PUT', '/api/v1/traffic_logging', {
        enabled: '1', enabled_tsdb: '1', tsdb_url: `http://127.0.0.1:${port}`, tsdb_token: 't', tsdb_bucket: 'b', tsdb_organization: 'o',
      }));
      assert.equal(res.status, 'success', res.error);
      for (let i = 0; i < 300; i++) h.source.emit(newFlow('10.0.1.2', 10_000 + i));
      await waitFor('a failed send', () => (h.app.services.trafficLogging.stats()[0]?.failures ?? 0) >= 1);
      const stats = h.app.services.trafficLogging.stats()[0];
      assert.ok(stats.backlog <= 50, `backlog ${stats.backlog} within the cap`);
      assert.equal(stats.dropped, 300 - 50, 'the oldest beyond the cap were dropped and counted');
      assert.equal(stats.sent, 0);
      // The API does not wait on the receiver: with a send held by a receiver that never answers, it still answers.
      const listening = createTcpServer((socket) => void held.push(socket.on('data', () => undefined)));
      silent = listening;
      await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve));
      await waitFor('a send held by the silent receiver', () => held.length > 0);
      for (let i = 0; i < 20; i++) assert.equal((await h.call('GET', '/api/v1/traffic_logging')).statusCode, 200);
      assert.ok(held.some((socket) => !socket.destroyed), 'the send was still held while the API answered');
      assert.equal(h.app.services.trafficLogging.stats()[0].sent, 0);
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => listening.close(() => resolve()));
      silent = null;
      tsdb = await writeReceiver(port);
      await waitFor('the backlog sent', () => h.app.services.trafficLogging.stats()[0].sent === 50);
      assert.equal(h.app.services.trafficLogging.stats()[0].backlog, 0);
      const body = tsdb.writes.map((w) => w.body).join('\n').trim().split('\n');
      assert.equal(body.length, 50);
      assert.ok(body[0].includes('sport=10250i'), 'the newest 50 were kept');
      assert.ok(body[49].includes('sport=10299i'));
    } finally {
      for (const socket of held) socket.destroy();
      silent?.close();
      await h.close();
      tsdb?.server.close();
    }
  });
});
