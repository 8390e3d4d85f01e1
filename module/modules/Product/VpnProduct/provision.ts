// What a VpnProduct service's provision data holds: where its panel account lives, and the placement or move under
// way (recorded before the panel is written, so a retried job continues on the same panel).
import { z } from 'zod';

/** Provision data stored on a service once its account exists. */
export interface VpnProvisionData {
  account_name: string;
  wg_server: string;
  address: string;
  panel_location: string;
  /** Name of the panel holding the account (absent on data written before panels had names: the location then). */
  panel?: string;
  /** A move to another panel or server under way (change_package). */
  move?: MoveTarget;
  /** A key regeneration under way: the account's public key before it. */
  rekey_from?: string;
}

/** Where a change_package moves the account. */
export interface MoveTarget {
  panel: string;
  location: string;
  wg_server: string;
}

const moveSchema = z.object({ panel: z.string().min(1), location: z.string().min(1), wg_server: z.string().min(1) });

export const provisionSchema = z.object({
  account_name: z.string(),
  wg_server: z.string(),
  address: z.string(),
  panel_location: z.string(),
  panel: z.string().min(1).optional(),
  move: moveSchema.optional(),
  rekey_from: z.string().min(1).optional(),
});

/** A placement chosen by createJob before the account was created (`{placement: {panel, location}}`). */
export const pendingPlacementSchema = z.object({ placement: z.object({ panel: z.string().min(1), location: z.string().min(1) }) });

/** The panel holding the account. */
export function panelOf(data: Pick<VpnProvisionData, 'panel' | 'panel_location'>): string {
  return data.panel ?? data.panel_location;
}
