// One-time-link page settings (OneTimeLinkConfig, -WireguardConfig, -Ikev2Config): defaults merged with stored changes.
import { type Clock } from '../../../shared/clock.ts';
import type { z } from 'zod';
import {
  otlIkev2ConfigSchema, otlPageConfigSchema, otlWireguardConfigSchema,
  type OtlIkev2Config, type OtlIkev2ConfigUpdate, type OtlPageConfig, type OtlPageConfigUpdate,
  type OtlWireguardConfig, type OtlWireguardConfigUpdate,
} from '../../../shared/wire/otl.ts';
import type { SettingsRepository } from '../../store/repositories/settings.ts';

/** Settings keys in the `settings` table. */
const KEYS = { page: 'otl.page', wireguard: 'otl.wireguard', ikev2: 'otl.ikev2' } as const;

const NO_BUTTONS = Object.fromEntries(
  [1, 2, 3, 4, 5, 6].flatMap((n) => [[`button${n}_label`, ''], [`button${n}_link`, '']]),
) as Omit<OtlWireguardConfig, 'download_config_button_label' | 'enable' | 'enable_config_qr' | 'enable_config_text'>;

/** Page settings until the operator changes them. */
export const DEFAULT_OTL_PAGE: Readonly<OtlPageConfig> = Object.freeze({
  title: 'Your VPN configuration',
  before_body: '',
  after_body: '',
  css: '',
  not_relevant: '<h1>This link is no longer valid</h1><p>It was already opened or it has expired. Ask your provider for a new one.</p>',
  lifetime: '1',
});

/** WireGuard part of the page until changed: text, QR and download on; the official app-store links as buttons. */
export const DEFAULT_OTL_WIREGUARD: Readonly<OtlWireguardConfig> = Object.freeze({
  ...NO_BUTTONS,
  button1_label: 'WireGuard for Android',
  button1_link: 'https://play.google.com/store/apps/details?id=com.wireguard.android',
  button2_label: 'WireGuard for iPhone and iPad',
  button2_link: 'https://apps.apple.com/app/wireguard/id1441195209',
  button3_label: 'WireGuard for Windows and macOS',
  button3_link: 'https://www.wireguard.com/install/',
  download_config_button_label: 'Download configuration',
  enable: true,
  enable_config_qr: true,
  enable_config_text: true,
});

/** IKEv2 part of the page until changed (shown only where the server offers IKEv2). */
export const DEFAULT_OTL_IKEV2: Readonly<OtlIkev2Config> = Object.freeze({
  ...NO_BUTTONS,
  download_certificate_button_label: 'Download CA certificate',
  download_profile_button_label: 'Download IKEv2 profile',
  enable: true,
});

/** GET/PUT of the three settings groups; a PUT changes only the fields it carries. */
export class OtlSettingsService {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly clock: Clock,
  ) {}

  page(): OtlPageConfig {
    return this.read(KEYS.page, otlPageConfigSchema, DEFAULT_OTL_PAGE);
  }

  wireguard(): OtlWireguardConfig {
    return this.read(KEYS.wireguard, otlWireguardConfigSchema, DEFAULT_OTL_WIREGUARD);
  }

  ikev2(): OtlIkev2Config {
    return this.read(KEYS.ikev2, otlIkev2ConfigSchema, DEFAULT_OTL_IKEV2);
  }

  updatePage(change: OtlPageConfigUpdate): OtlPageConfig {
    return this.write(KEYS.page, { ...this.page(), ...defined(change) });
  }

  updateWireguard(change: OtlWireguardConfigUpdate): OtlWireguardConfig {
    return this.write(KEYS.wireguard, { ...this.wireguard(), ...defined(change) });
  }

  updateIkev2(change: OtlIkev2ConfigUpdate): OtlIkev2Config {
    return this.write(KEYS.ikev2, { ...this.ikev2(), ...defined(change) });
  }

  /** Link lifetime in days (the page setting `lifetime`). */
  lifetimeDays(): number {
    return Number(this.page().lifetime);
  }

  /** The stored value over the defaults, field by field; a stored value of the wrong shape falls back to the default. */
  private read<T extends object>(key: string, schema: z.ZodObject, defaults: Readonly<T>): T {
    const stored = this.settings.get<Record<string, unknown>>(key) ?? {};
    const out = { ...defaults } as Record<string, unknown>;
    for (const [name, fieldSchema] of Object.entries(schema.shape)) {
      if (name in stored && (fieldSchema as z.ZodType).safeParse(stored[name]).success) out[name] = stored[name];
    }
    return out as T;
  }

  private write<T>(key: string, value: T): T {
    this.settings.set(key, value, this.clock.now());
    return value;
  }
}

/** `change` without its undefined members (absent form fields). */
function defined<T extends object>(change: T): Partial<T> {
  return Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) as Partial<T>;
}
