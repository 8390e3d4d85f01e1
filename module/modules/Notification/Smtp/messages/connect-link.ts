// The one-time link of a VpnProduct account, asked of the panel holding it through the `panel-directory` capability
// (provided by VpnProduct); null with the reason when no module provides it or the panel cannot give one.
import type { Capabilities, OneTimeLinkAnswer } from '../../../../contract/capabilities.ts';

/** Issues a one-time link for an account; `panel` is the panel's key (its name, or its location on older data). */
export interface ConnectLinks {
  /** A fresh link (`{base_url}/otl/<key>`), or null with the reason when none can be had. */
  link(panel: string, accountName: string, signal?: AbortSignal): Promise<OneTimeLinkAnswer>;
}

/** Over the capability, resolved at each link (VpnProduct may be switched off and on); each ask bounded by `timeoutMs`. */
export class CapabilityConnectLinks implements ConnectLinks {
  constructor(private readonly capabilities: Capabilities, private readonly timeoutMs = 10_000) {}

  async link(panel: string, accountName: string, signal?: AbortSignal): Promise<OneTimeLinkAnswer> {
    const directory = this.capabilities.find('panel-directory');
    if (!directory) return { url: null, reason: "no module provides capability 'panel-directory'" };
    const timeout = AbortSignal.timeout(this.timeoutMs);
    return directory.oneTimeLink(panel, accountName, signal ? AbortSignal.any([signal, timeout]) : timeout);
  }
}
