// Pure renderer of the one-time-link pages (confirm, configuration, not_relevant) from the handlebars templates of views/panel/otl.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Handlebars from 'handlebars';
import { COMPILE_OPTIONS, createViewEngine } from '../../shared/view-engine.ts';
import type { OtlIkev2Config, OtlPageConfig, OtlWireguardConfig } from '../../shared/wire/otl.ts';

/** Directory of the page templates. */
const OTL_VIEWS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'views', 'panel', 'otl');

/** One of the six optional buttons, shown when both its label and its link are set. */
export interface OtlButton {
  label: string;
  link: string;
}

/** The WireGuard part of a configuration page (null when switched off). */
export interface OtlWireguardPart {
  /** Configuration text, when `enable_config_text`. */
  text: string | null;
  /** `data:image/png;base64,...` of the QR code, when `enable_config_qr`. */
  qr: string | null;
  qrSize: number;
  /** Download URL (relative to the page) and the name the file is saved as. */
  download: string;
  filename: string;
  label: string;
  buttons: OtlButton[];
}

/** The IKEv2 part (null when switched off or not offered). */
export interface OtlIkev2Part {
  certificate: string | null;
  certificateLabel: string;
  profile: string | null;
  profileLabel: string;
  buttons: OtlButton[];
}

/** What every page is built from: the operator's trusted fragments and the response's CSP nonce. */
export interface OtlPageFrame {
  page: OtlPageConfig;
  nonce: string;
}

/** Data of the configuration page; `account` and the configuration are account data and always escaped. */
export interface OtlConfigView {
  account: string;
  wireguard: OtlWireguardPart | null;
  ikev2: OtlIkev2Part | null;
  graceMinutes: number;
}

/** The operator's buttons of a settings group that have both a label and a link. */
export function otlButtons(config: OtlWireguardConfig | OtlIkev2Config): OtlButton[] {
  const out: OtlButton[] = [];
  for (const n of [1, 2, 3, 4, 5, 6] as const) {
    const label = config[`button${n}_label`];
    const link = config[`button${n}_link`];
    if (label && link) out.push({ label, link });
  }
  return out;
}

/** The title fragment as plain text for the `<title>` element (tags dropped; handlebars escapes the rest). */
export function plainTitle(title: string): string {
  return title.replace(/<[^>]*>/g, '').replace(/\s+/g, ' ').trim() || 'VPN configuration';
}

/** Compiled templates of views/panel/otl (own handlebars environment, partials `head` and `foot`). */
export class OtlPageRenderer {
  private readonly confirmTpl: Handlebars.TemplateDelegate;
  private readonly configTpl: Handlebars.TemplateDelegate;
  private readonly notRelevantTpl: Handlebars.TemplateDelegate;
  private readonly baseCss: string;
  /** favicon.svg as a data: URL (the page's CSP allows images from data: only besides its own origin). */
  private readonly favicon: string;

  constructor(dir = OTL_VIEWS_DIR) {
    const hbs = createViewEngine();
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    hbs.registerPartial('head', read('partials/head.hbs'));
    hbs.registerPartial('foot', read('partials/foot.hbs'));
    const compile = (name: string) => hbs.compile(read(name), COMPILE_OPTIONS);
    this.confirmTpl = compile('confirm.hbs');
    this.configTpl = compile('config.hbs');
    this.notRelevantTpl = compile('not-relevant.hbs');
    this.baseCss = read('otl.css');
    this.favicon = `data:image/svg+xml;base64,${readFileSync(join(dir, 'favicon.svg')).toString('base64')}`;
  }

  /** The page a valid link shows first: the operator's fragments and a "Show my configuration" button (POST). */
  confirm(frame: OtlPageFrame): string {
    return this.confirmTpl(this.frame(frame));
  }

  /** The configuration page of the consuming view. */
  config(frame: OtlPageFrame, view: OtlConfigView): string {
    return this.configTpl({ ...this.frame(frame), ...view });
  }

  /** The page of an unknown, used or expired link: the `not_relevant` fragment. */
  notRelevant(frame: OtlPageFrame): string {
    return this.notRelevantTpl(this.frame(frame));
  }

  private frame({ page, nonce }: OtlPageFrame): Record<string, unknown> {
    return {
      nonce, baseCss: this.baseCss, favicon: this.favicon, css: page.css, title: page.title, plainTitle: plainTitle(page.title),
      before_body: page.before_body, after_body: page.after_body, not_relevant: page.not_relevant,
    };
  }
}
