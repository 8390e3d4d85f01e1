// Zod schemas of the System resources: SystemStatus, SystemInfo, SystemConfig and the PUT /system/config payload.
import { z } from 'zod';
import { E } from './error-texts.ts';
import { intInRange } from './form.ts';

/**
 * GET /system/status. `license` is always an ISO 8601 timestamp with offset: the license expiry, or on the free tier
 * (no paid term; `license_valid` false) the time of the answer; `count_accounts_available` is the account limit minus the accounts (never below 0); `status` is `OK`,
 * `Loading (<done>/<total>)` during a full reconcile, or a text starting with `Error:` when the data plane is unwell.
 */
export const systemStatusSchema = z.object({
  count_accounts: z.number().int(),
  count_accounts_available: z.number().int(),
  count_wireguard: z.number().int(),
  license: z.string(),
  license_valid: z.boolean(),
  status: z.string(),
  version: z.string(),
});
export type SystemStatus = z.infer<typeof systemStatusSchema>;

/**
 * GET /system/info; every value is a string. Memory values are bytes (`memory_free` = MemAvailable,
 * `memory_used` = total − available), `memory_used_percent` and loads have two decimals.
 */
export const systemInfoSchema = z.object({
  cpu_model: z.string(),
  cpu_threads: z.string(),
  cpu_used_load1: z.string(),
  cpu_used_load5: z.string(),
  cpu_used_load15: z.string(),
  hostname: z.string(),
  memory_free: z.string(),
  memory_total: z.string(),
  memory_used: z.string(),
  memory_used_percent: z.string(),
  os_architecture: z.string(),
  os_name: z.string(),
  timezone: z.string(),
});
export type SystemInfo = z.infer<typeof systemInfoSchema>;

/** GET/PUT /system/config answer. */
export const systemConfigSchema = z.object({
  traffic_statistics_frequency: z.number().int(),
  traffic_statistics_history: z.number().int(),
  wireguard_handshake_uptime: z.number().int(),
});
export type SystemConfig = z.infer<typeof systemConfigSchema>;

/** Values restored by PUT /system/config/default. */
export const SYSTEM_CONFIG_DEFAULTS: Readonly<SystemConfig> = Object.freeze({
  traffic_statistics_frequency: 5,
  traffic_statistics_history: 2,
  wireguard_handshake_uptime: 180,
});

/**
 * PUT /system/config payload, keys in the spec's order of checks: each field optional; a given field must be an
 * integer in its range. The frequency text states 2147483647 but 1-1440 is enforced (the documented range).
 */
export const systemConfigUpdateSchema = z.object({
  traffic_statistics_frequency: intInRange(1, 1440, E.CONFIG_FREQUENCY).optional(),
  traffic_statistics_history: intInRange(0, 2147483647, E.CONFIG_HISTORY).optional(),
  wireguard_handshake_uptime: intInRange(1, 300, E.CONFIG_HANDSHAKE).optional(),
});
export type SystemConfigUpdate = z.infer<typeof systemConfigUpdateSchema>;
