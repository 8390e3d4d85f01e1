// Writes flow records to the TSDB as InfluxDB line protocol through the v2 write API (@influxdata/influxdb-client).
import { InfluxDB, Point, setLogger, type WriteApi } from '@influxdata/influxdb-client';
import type { TrafficLoggingFlag } from '../../schemas/traffic-logging.ts';
import type { FlowRecord } from './flow-event.ts';
import type { BatchSink } from './shipper.ts';

// The library writes its own failures to the console; the Shipper reports them through the panel's logger instead.
setLogger({ error: () => undefined, warn: () => undefined });

/** Measurement name of every point. */
const MEASUREMENT = 'vpn_flow';

/** Where and as whom to write. */
export interface TsdbTarget {
  url: string;
  org: string;
  bucket: string;
  token: string;
}

/**
 * One point per flow: measurement `vpn_flow`; tags `account`, `address`, `state`, `proto`, `direction` (and `in`,
 * `out` when selected; `out` only for routed packets); fields `src`, `dst` (strings), `sport`, `dport` (integers,
 * when the protocol has ports), `len`, `tos`, `mark` (integers, when selected), `count=1i`; timestamp the
 * kernel's log time in ms.
 */
export function toPoint(record: FlowRecord, flags: Readonly<Record<TrafficLoggingFlag, boolean>>): Point {
  const e = record.event;
  const p = new Point(MEASUREMENT)
    .tag('account', record.account)
    .tag('address', record.address)
    .tag('state', e.state)
    .tag('proto', e.protocol)
    .tag('direction', record.outgoing ? 'out' : 'in')
    .stringField('src', e.src)
    .stringField('dst', e.dst)
    .intField('count', 1)
    .timestamp(e.time);
  if (flags.interface_in) p.tag('in', e.interface_in);
  if (flags.interface_out && e.interface_out !== null) p.tag('out', e.interface_out);
  if (e.sport !== null) p.intField('sport', e.sport);
  if (e.dport !== null) p.intField('dport', e.dport);
  if (flags.len) p.intField('len', e.length);
  if (flags.tos) p.intField('tos', e.tos);
  if (flags.mark) p.intField('mark', e.mark);
  return p;
}

/**
 * TSDB sink on the client library's WriteApi (`POST <url>/api/v2/write?org=&bucket=&precision=ms`,
 * `Authorization: Token <token>`). The library's own retries and buffer are off (maxRetries 0): the
 * {@link Shipper} owns batching, the cap and the backoff, so a failed `flush` rejects at once.
 */
export class TsdbSink implements BatchSink<Point> {
  readonly name = 'tsdb';
  private readonly api: WriteApi;

  constructor(target: TsdbTarget, timeoutMs = 5_000) {
    const client = new InfluxDB({ url: target.url, token: target.token, timeout: timeoutMs });
    this.api = client.getWriteApi(target.org, target.bucket, 'ms', {
      batchSize: 100_000,
      flushInterval: 0,
      maxRetries: 0,
      maxBufferLines: 100_000,
      // The library logs write failures to the console by default; the shipper reports them (without the token).
      writeFailed: () => undefined,
    });
  }

  async send(batch: Point[]): Promise<void> {
    this.api.writePoints(batch);
    await this.api.flush();
  }

  async close(): Promise<void> {
    this.api.dispose();
  }
}
