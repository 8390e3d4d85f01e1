// Writes flow records to the TSDB as InfluxDB line protocol through the v2 write API (@influxdata/influxdb-client).
import { InfluxDB, Point, setLogger, type WriteApi } from '@influxdata/influxdb-client';
import type { TrafficLoggingFlag } from '../../schemas/traffic-logging.ts';
import type { FlowRecord } from './flow-event.ts';
import type { BatchSink } from './shipper.ts';

// The library writes its own failures to the console; the Shipper reports them through the panel's logger instead.
setLogger({ error: () => undefined, warn: () => undefined });

/** Measurement name of every point. */
export const MEASUREMENT = 'vpn_flow';

/** Where and as whom to write. */
export interface TsdbTarget {
  url: string;
  org: string;
  bucket: string;
  token: string;
}

/**
 * One point per flow: measurement `vpn_flow`; tags `account`, `address`, `state`, `proto`, `direction` (and `in`
 * when selected); fields `src`, `dst` (strings), `sport`, `dport` (integers), `mark`, `len` when selected and
 * reported, `count=1i`; timestamp the kernel's event time in ms.
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
  if (flags.interface_in) p.tag('in', record.interface_in);
  if (e.sport !== null) p.intField('sport', e.sport);
  if (e.dport !== null) p.intField('dport', e.dport);
  if (flags.mark && e.mark !== null) p.intField('mark', e.mark);
  if (flags.len && e.bytes !== null) p.intField('len', e.bytes);
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
