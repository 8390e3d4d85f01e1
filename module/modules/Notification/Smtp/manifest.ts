// What Smtp contributes to the host: its config section, its sends table, its stores and message composer, its ledger
// (local on the platform, the worker routes in a remote worker), the worker routes themselves, and the message
// listeners on the platform's hooks (platform process only: they need the customers and the sends table).
import type { Logger } from 'pino';
import { z } from 'zod';
import { defineManifest, type ExtensionEnv } from '../../../platform/extension.ts';
import type { PlatformReads } from '../../../contract/platform-reads.ts';
import { smtpAdminRoutes } from './admin-routes.ts';
import type { SmtpLedger } from './ledger.ts';
import { LocalSmtpLedger } from './local-ledger.ts';
import { MessageComposer } from './messages/compose.ts';
import { CapabilityConnectLinks } from './messages/connect-link.ts';
import { registerMessageListeners, type ChannelPicker } from './messages/listeners.ts';
import { HostRecipientDirectory } from './messages/recipients.ts';
import { RemoteSmtpLedger } from './remote-ledger.ts';
import { SendStore, SMTP_MIGRATIONS } from './send-store.ts';
import { smtpWorkerRoutes } from './worker-routes.ts';

const jobSchema = z.object({
  tries: z.number().int().min(1).max(20).default(3),
  backoff: z.number().int().min(0).max(86_400).default(60),
  timeout: z.number().int().min(5).max(3_600).default(120),
});

/** Smtp's config.ts section. */
export const smtpConfigSchema = z.object({
  enabled: z.boolean(),
  version: z.string().min(1),
  /** The channel (instance uuid or label) carrying the platform's messages; default: the oldest Smtp instance. */
  channel: z.string().min(1).optional(),
  /** Name shown in the messages. */
  brand: z.string().min(1).max(100).default('vpnhost'),
  /** Link to the customers' client area, shown in the messages. */
  client_area_url: z.url({ protocol: /^https?$/ }).optional(),
  /** The platform's public base URL: the password reset mail links to `<public_url>/client/password/reset?token=…`. */
  public_url: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8090'),
  /** Task options of a delivery (tries, backoff s, timeout s). */
  job: jobSchema.default({ tries: 3, backoff: 60, timeout: 120 }),
  /** Timeout of each SMTP step (connect, greeting, socket idle). */
  smtp_timeout_ms: z.number().int().min(100).max(600_000).default(30_000),
});
export type SmtpConfig = z.infer<typeof smtpConfigSchema>;

/** The module's services, merged into its context; the stores are null in a remote worker (no platform database there). */
export interface SmtpServices {
  /** The jobs' data steps: local on the platform, through the worker routes in a remote worker; null with neither. */
  smtpLedger: SmtpLedger | null;
  /** The platform's ledger, which the worker routes answer with (null in a remote worker). */
  smtpLocalLedger: LocalSmtpLedger | null;
  smtpSends: SendStore | null;
  smtpComposer: MessageComposer | null;
  smtpChannels: ChannelPicker | null;
  /** Where the listeners report an event they could not queue. */
  smtpLogger: Logger;
  /** Task options of the queued jobs (message and delivery). */
  smtpJob: SmtpConfig['job'];
}

/** The channel named by config `channel` (uuid or label), else the oldest Smtp instance, else none (the host's read API). */
function channelPicker(platform: PlatformReads, configured: string | undefined): ChannelPicker {
  return { defaultChannel: () => platform.notificationChannel('Smtp', configured ?? null) };
}

function services(env: ExtensionEnv): SmtpServices {
  const config = smtpConfigSchema.parse(env.config);
  const common = { smtpLogger: env.logger, smtpJob: config.job };
  if (!env.store || !env.sealer || !env.platform) {
    const smtpLedger = env.worker ? new RemoteSmtpLedger(env.worker) : null;
    return { smtpLedger, smtpLocalLedger: null, smtpSends: null, smtpComposer: null, smtpChannels: null, ...common };
  }
  const sends = new SendStore(env.store, env.sealer, env.clock);
  const composer = new MessageComposer({
    recipients: new HostRecipientDirectory(env.platform),
    links: new CapabilityConnectLinks(env.capabilities, config.smtp_timeout_ms),
    brand: config.brand,
    clientAreaUrl: config.client_area_url ?? null,
    publicUrl: config.public_url,
  });
  const local = new LocalSmtpLedger(sends, composer);
  return {
    ...common,
    smtpLedger: local,
    smtpLocalLedger: local,
    smtpSends: sends,
    smtpComposer: composer,
    smtpChannels: channelPicker(env.platform, config.channel),
  };
}

export const smtpManifest = defineManifest<SmtpServices>({
  config: smtpConfigSchema,
  migrations: SMTP_MIGRATIONS,
  services,
  /** The connect link of a VpnProduct account in the service mails (left out when no module provides it). */
  uses: ['panel-directory'],
  adminApi: (ext) => smtpAdminRoutes(ext.smtpSends),
  /** The ledger steps of a remote worker's Smtp jobs (worker tokens only). */
  workerApi: (ext) => smtpWorkerRoutes(ext.smtpLocalLedger),
  hooks: (hooks, ext) => {
    if (ext.smtpChannels) registerMessageListeners(hooks, ext.smtpChannels, ext.smtpJob, ext.smtpLogger);
  },
});
