// Pure renderer of the panel's own strongswan.conf for charon-systemd (plugins, vici socket, log levels, libipsec).
import { CHARONDEBUG_SUBSYSTEMS } from '../../../shared/wire/error-texts.ts';
import type { Ikev2AdvancedSettings } from '../../schemas/ikev2.ts';

/** Where the daemon's files live. */
export interface StrongswanPaths {
  /** vici control socket (unix path). */
  viciSocket: string;
  /** charon's log file. */
  logFile: string;
}

/** Options of {@link renderStrongswanConf}. */
export interface StrongswanOptions extends StrongswanPaths {
  /** ESP in userspace through a TUN device (`kernel-libipsec`) instead of the kernel's XFRM. */
  libipsec: boolean;
  /** Levels per subsystem (`charondebug_*`, -1..4). */
  settings: Pick<Ikev2AdvancedSettings, `charondebug_${(typeof CHARONDEBUG_SUBSYSTEMS)[number]}`>;
  /**
   * The address of the panel's identity lease responder: loads the `dhcp` plugin, which asks it (unicast, the EAP
   * identity as client identifier) for the address of a client on the shared EAP connection (pool `dhcp`).
   */
  identityLeaseServer?: string;
}

/**
 * Plugins loaded explicitly (load_modular off, the host's /etc/strongswan.d is not read): crypto via openssl and kdf (IKE key derivation; with
 * `load_legacy` so OpenSSL 3 still gives MD4, which MSCHAPv2 needs), X.509/PEM parsing, the netlink kernel
 * interface (plus kernel-libipsec when asked), sockets, vici, eap-identity + eap-mschapv2, attr (DNS to clients) and,
 * with identity leases, dhcp.
 */
export function pluginList(libipsec: boolean, dhcp = false): string {
  return [
    'random', 'nonce', 'openssl', 'kdf', 'pem', 'pkcs1', 'pkcs8', 'x509', 'revocation', 'constraints', 'pubkey',
    ...(libipsec ? ['kernel-libipsec'] : []), 'kernel-netlink', 'socket-default', 'vici', 'eap-identity',
    'eap-mschapv2', 'attr', ...(dhcp ? ['dhcp'] : []),
  ].join(' ');
}

/**
 * The strongswan.conf text (read through STRONGSWAN_CONF). charon-systemd reads its loggers from its own section (no
 * journal, one file log with the charondebug levels) and everything else through its fallback to `charon`.
 */
export function renderStrongswanConf(opts: StrongswanOptions): string {
  const levels = CHARONDEBUG_SUBSYSTEMS.map((s) => `        ${s} = ${opts.settings[`charondebug_${s}`]}`).join('\n');
  return `# Written by vpnhost; changes here are overwritten.
charon-systemd {
  journal {
    default = -1
  }
  filelog {
    panel {
      path = ${opts.logFile}
      time_format = %F %T
      time_add_ms = yes
      append = yes
      default = 1
${levels}
    }
  }
}
charon {
  load_modular = no
  load = ${pluginList(opts.libipsec, !!opts.identityLeaseServer)}
  plugins {
    vici {
      socket = unix://${opts.viciSocket}
    }
    openssl {
      load_legacy = yes
    }${opts.identityLeaseServer ? `
    dhcp {
      server = ${opts.identityLeaseServer}
      force_server_address = yes
      identity_lease = yes
    }` : ''}
  }
}
`;
}
