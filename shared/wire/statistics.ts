// Wire schemas of GET /account/<name>/traffic_statistics/<YEAR>/<MONTH>: path parameters and TrafficStatisticsEntry.
import { z } from 'zod';

/** Path parameters as they arrive (checked by the service for the spec's texts). */
export const TrafficStatisticsParamsSchema = z.object({ name: z.string(), year: z.string(), month: z.string() });
export type TrafficStatisticsParams = z.infer<typeof TrafficStatisticsParamsSchema>;

/**
 * One day of one account: `traffic_download` = bytes the server sent to the peer (WireGuard `transfer_tx`),
 * `traffic_upload` = bytes received from it (`transfer_rx`); `date` is `YYYY-MM-DD` in the panel's time zone.
 */
export const TrafficStatisticsEntrySchema = z.object({
  account: z.string(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  traffic_download: z.number().int().nonnegative(),
  traffic_upload: z.number().int().nonnegative(),
});
export type TrafficStatisticsEntry = z.infer<typeof TrafficStatisticsEntrySchema>;

/** The answer: one entry per day of the month (up to today for the current month). */
export const TrafficStatisticsSchema = z.array(TrafficStatisticsEntrySchema);

/** GET /traffic_statistics?from=YYYY-MM-DD[&to=YYYY-MM-DD] (every account's stored days: an extension of the spec). */
export const TrafficStatisticsRangeQuerySchema = z.object({ from: z.string().optional(), to: z.string().optional() });
export type TrafficStatisticsRangeQuery = z.infer<typeof TrafficStatisticsRangeQuerySchema>;
