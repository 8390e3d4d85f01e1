// Zod schemas of DnsStatus (GET/PUT /dns answer) and of the PUT /dns payload, with the spec's error texts.
import { z } from 'zod';
import { E, OWN, flagFormatError } from '../../shared/wire/error-texts.ts';
import { field, intInRange, toBoolean } from '../../shared/wire/form.ts';
import { canonicalIp, parseCidr, reservedRangeOf } from './ip.ts';

/** DnsStatus: `acl` the servers' subnets, `dnsd` unbound's version, `pid` '' when not running. */
export const dnsStatusSchema = z.object({
  acl: z.array(z.string()),
  dnsd: z.string(),
  enabled: z.boolean(),
  forwarders_1: z.string(),
  forwarders_2: z.string(),
  max_cache_ttl: z.string(),
  pid: z.string(),
});
export type DnsStatus = z.infer<typeof dnsStatusSchema>;

/** Bounds of `max_cache_ttl` on change (seconds). */
export const MAX_CACHE_TTL_RANGE = { min: 30, max: 3600 } as const;

/**
 * A forwarder: one IPv4 or IPv6 address (canonical form returned), not loopback, unspecified, link-local,
 * multicast, broadcast or IPv4-mapped (unbound would not or could not query it); `''` only where `emptyOk`.
 */
function forwarder(emptyOk: boolean) {
  return (value: unknown): string | undefined => {
    if (typeof value !== 'string') return undefined;
    const text = value.trim();
    if (text === '') return emptyOk ? '' : undefined;
    const ip = canonicalIp(text);
    if (!ip) return undefined;
    const cidr = parseCidr(`${ip}/${ip.includes(':') ? 128 : 32}`);
    return cidr && reservedRangeOf(cidr) === null ? ip : undefined;
  };
}

/**
 * PUT /dns payload, every field optional (merged with the stored settings): `enabled` (1/0, true/false),
 * `forwarders_1` (an address), `forwarders_2` (an address, or empty for none), `max_cache_ttl` (30-3600).
 */
export const dnsUpdateSchema = z.object({
  enabled: field(flagFormatError('enabled'), toBoolean).optional(),
  forwarders_1: field(E.DNS_FORWARDER1, forwarder(false)).optional(),
  forwarders_2: field(E.DNS_FORWARDER2, forwarder(true)).optional(),
  max_cache_ttl: intInRange(MAX_CACHE_TTL_RANGE.min, MAX_CACHE_TTL_RANGE.max, OWN.DNS_MAX_CACHE_TTL).optional(),
});
export type DnsUpdate = z.infer<typeof dnsUpdateSchema>;
