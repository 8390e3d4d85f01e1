// Panel usernames in use: a service's username is unique per panel location (the panel refuses a second one), so
// VpnProduct refuses it at saveServiceData instead of failing five job tries later.
import type { PlatformReads } from '../../../contract/platform-reads.ts';

/** Error text of the `username` field when another live service on the same panel holds it. */
export const USERNAME_TAKEN = 'The username has already been taken on this server location.';

/** Which usernames are held by live (not terminated) services per panel location. */
export interface UsernameDirectory {
  /** True when a live VpnProduct service other than `exceptService` has `username` at `location`. */
  taken(location: string, username: string, exceptService?: string | null): Promise<boolean>;
}

/** Over the host's read API of platform data (services and products); platform process only. */
export class HostUsernameDirectory implements UsernameDirectory {
  constructor(private readonly platform: PlatformReads) {}

  async taken(location: string, username: string, exceptService: string | null = null): Promise<boolean> {
    return await this.platform.findService({
      module: 'VpnProduct', live: true, productData: { server_location: location }, serviceData: { username }, except: exceptService,
    }) !== null;
  }
}
