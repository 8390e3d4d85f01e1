// Module configuration (the spec's config.php): one typed section per module, read through Module.config(key).

/** Keys every module section has; modules add their own. */
export interface ModuleSettings {
  /** Loaded by the platform when true. */
  enabled: boolean;
  /** Code version of the module; a change triggers its `update()`. */
  version: string;
  [key: string]: unknown;
}

export type ModuleTypeName = 'Product' | 'Plugin' | 'Payment' | 'Notification';

export interface ModulesConfig {
  modules: Record<ModuleTypeName, Record<string, ModuleSettings>>;
}

export const config = {
  modules: {
    Product: {
      VpnProduct: {
        enabled: true,
        version: '1.0.0',
        /** Timeout of one panel API call. */
        api_timeout_ms: 10_000,
        /** Task options of every VpnProduct job (tries, backoff s, timeout s, maxExceptions). */
        job: { tries: 5, backoff: 2, timeout: 60, maxExceptions: 5 },
        /** Keep-alive sockets per panel. */
        panel_connections: 16,
        /** New one-time links a customer may make per service in the client area, per window (each revokes the earlier ones). */
        otl_links: { limit: 5, window_minutes: 15 },
        /** Data caps: how often every panel's traffic is read (one request per panel) and the caps applied. */
        caps: { every_ms: 300_000 },
      },
    },
    Plugin: {
      /** The VPN fleet: every panel's status refreshed by a queued job, admin pages, fleet events. */
      VpnFleet: {
        enabled: true,
        version: '1.0.0',
        /** How often the fleet refresh is queued. */
        refresh_every_ms: 60_000,
      },
    },
    Payment: {
      Stripe: {
        enabled: true,
        version: '1.0.0',
        /**
         * Public base URL of the platform, used where no request says it: the admin's settings page shows the webhook URL
         * on the address the admin reached the platform at (`<that address>/webhooks/payment/<gateway_uuid>`).
         */
        public_url: 'http://127.0.0.1:8090',
      },
    },
    Notification: {
      /** E-mail through an SMTP channel (module_instances, settings sealed); without a channel the e-mails are logged. */
      Smtp: {
        enabled: true,
        version: '1.0.0',
        /** Name shown in the customers' e-mails. */
        brand: 'vpnhost',
        /** Task options of a delivery: tries, backoff (s) between them, timeout (s) of one attempt. */
        job: { tries: 3, backoff: 60, timeout: 120 },
        /** Timeout of each SMTP step (connect, greeting, idle socket). */
        smtp_timeout_ms: 30_000,
      },
    },
  },
} satisfies ModulesConfig;

/** The section of `type`/`name` (an empty object when the module has none). */
export function moduleSettings(type: ModuleTypeName, name: string, source: ModulesConfig = config): Readonly<Record<string, unknown>> {
  return source.modules[type][name] ?? {};
}
