// Capabilities between modules: what one module provides (by name, through the interface defined here) and another
// requires or may use. A module never imports another module's files; the host hands it the provider's implementation.

/** The reading of a panel's `GET /system/status` a capability user may rely on. */
export interface PanelStatusReading {
  status: string;
  version: string;
  license: string;
  license_valid: boolean;
  count_accounts: number;
  count_accounts_available: number;
}

/** Read-only calls on one panel, through the provider's pooled client. */
export interface PanelReader {
  /** `GET /system/status`. */
  systemStatus(signal?: AbortSignal): Promise<PanelStatusReading>;
  /** `GET /wireguard`: the panel's WireGuard servers by name (only the keys are relied on). */
  listServers(signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** Peers with a recent handshake (`GET /wireguard/online`). */
  onlinePeerCount(signal?: AbortSignal): Promise<number>;
}

/** A registered panel as a capability user sees it: no access hash. */
export interface PanelListing {
  /** Unique name of the panel (its location unless given at registration). */
  name: string;
  location: string;
  api_url: string;
}

/** A one-time link, or null with the reason when none can be had. */
export type OneTimeLinkAnswer = { url: string } | { url: null; reason: string };

/**
 * `panel-directory` (provided by Product/VpnProduct): the panels the platform provisions onto, read access to each,
 * and one-time links of accounts held on them. Access hashes never leave the provider.
 */
export interface PanelDirectoryCapability {
  /** Every registered panel, sorted by location then name; rejects in a remote worker (the list lives on the platform). */
  panels(): Promise<PanelListing[]>;
  /** Read access to the panel named `name`; rejects when none is registered under it. */
  reader(name: string): Promise<PanelReader>;
  /**
   * A fresh one-time link (`{base_url}/otl/<key>`) of `accountName` on the panel named `panel`; never rejects: a panel
   * not registered, not offering links or not reachable answers `{url: null, reason}`.
   */
  oneTimeLink(panel: string, accountName: string, signal?: AbortSignal): Promise<OneTimeLinkAnswer>;
}

/** Every capability by name, with its interface. */
export interface CapabilityMap {
  'panel-directory': PanelDirectoryCapability;
}

export type CapabilityName = keyof CapabilityMap;

/** Error texts of the host's capability resolution. */
export const MISSING_CAPABILITY = (module: string, capability: string) =>
  `module ${module} requires capability '${capability}', which no loaded module provides`;
export const CAPABILITY_NOT_LOADED = (capability: string) => `capability '${capability}' is not provided by any loaded module`;
export const CAPABILITY_PROVIDED_TWICE = (capability: string, first: string, second: string) =>
  `capability '${capability}' is provided by both ${first} and ${second}`;

/**
 * How a module reaches a capability: resolved at each call (the provider may be mounted after the user, or switched
 * off and on again). `get` throws CAPABILITY_NOT_LOADED when no loaded module provides it; `find` answers null.
 */
export interface Capabilities {
  get<K extends CapabilityName>(name: K): CapabilityMap[K];
  find<K extends CapabilityName>(name: K): CapabilityMap[K] | null;
}
