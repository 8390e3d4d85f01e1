// Traffic logging at run time: logged packets → flag filter → account attribution → syslog and TSDB shippers.
import type { TrafficLoggingFlag } from '../../schemas/traffic-logging.ts';
import type { FlowOwnerRow } from '../../store/repositories/traffic-logging.ts';
import { FlowAttribution } from './flow-attribution.ts';
import type { FlowEvent } from './flow-event.ts';
import type { FlowSource, FlowSubscription } from '../../dataplane/traffic-log/flow-source.ts';
import { Shipper, type ShipperOptions, type ShipperStats } from './shipper.ts';
import { formatSyslog } from './syslog-format.ts';
import { SyslogUdpSink } from './syslog-sink.ts';
import { toPoint, TsdbSink, type TsdbTarget } from './tsdb-sink.ts';
import type { Point } from '@influxdata/influxdb-client';

/** Everything one running pipeline needs. */
export interface FlowPipelineOptions {
  source: FlowSource;
  owners: () => FlowOwnerRow[];
  flags: Readonly<Record<TrafficLoggingFlag, boolean>>;
  syslog: { host: string; port: number } | null;
  tsdb: TsdbTarget | null;
  hostname: string;
  shipper?: ShipperOptions;
  onError?: (what: string, err: unknown) => void;
}

/** Whether the flags select an event of this state (the kernel rules log only selected states; this keeps it so). */
export function selected(event: FlowEvent, flags: Readonly<Record<TrafficLoggingFlag, boolean>>): boolean {
  return flags[event.state];
}

/** One running logging pipeline; built and stopped by the TrafficLoggingService when the config changes. */
export class FlowPipeline {
  private readonly attribution: FlowAttribution;
  private readonly syslog: Shipper<string> | null;
  private readonly tsdb: Shipper<Point> | null;
  private subscription: FlowSubscription | null = null;
  /** Events seen / recorded since start. */
  events = 0;
  recorded = 0;

  constructor(private readonly opts: FlowPipelineOptions) {
    this.attribution = new FlowAttribution(opts.owners);
    const onError = (sink: string, err: unknown) => opts.onError?.(sink, err);
    this.syslog = opts.syslog ? new Shipper(new SyslogUdpSink(opts.syslog.host, opts.syslog.port), { ...opts.shipper, onError }) : null;
    this.tsdb = opts.tsdb ? new Shipper(new TsdbSink(opts.tsdb), { ...opts.shipper, onError }) : null;
  }

  start(): void {
    this.subscription = this.opts.source.start(
      (event) => this.handle(event),
      (err) => this.opts.onError?.('source', err),
    );
  }

  /** Filters, attributes and queues one event; never waits on a receiver. */
  handle(event: FlowEvent): void {
    this.events++;
    if (!selected(event, this.opts.flags)) return;
    const record = this.attribution.attribute(event, this.opts.flags.incoming);
    if (!record) return;
    this.recorded++;
    this.syslog?.push(formatSyslog(record, this.opts.flags, this.opts.hostname, process.pid));
    this.tsdb?.push(toPoint(record, this.opts.flags));
  }

  stats(): ShipperStats[] {
    return [this.syslog?.stats(), this.tsdb?.stats()].filter((s): s is ShipperStats => !!s);
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
    this.subscription = null;
    await Promise.all([this.syslog?.close(), this.tsdb?.close()]);
  }
}
