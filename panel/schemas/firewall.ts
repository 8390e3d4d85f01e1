// Firewall wire shapes (spec FirewallInfo, FirewallConf, FilterRule, NatRule, MangleRule) and request bodies.
import { z } from 'zod';
import { optionalParam, textParam } from '../../shared/wire/common-wire.ts';

/** GET /firewall/info. */
export const FirewallInfoSchema = z.object({ ip_forward: z.string(), iproute2: z.string(), iptables: z.string() });
export type FirewallInfo = z.infer<typeof FirewallInfoSchema>;

const verdict = z.enum(['ACCEPT', 'DROP']);

/** GET /firewall/conf. */
export const FirewallConfSchema = z.object({
  internal_traffic: z.boolean(),
  ip_forward: z.boolean(),
  policy_forward: verdict,
  policy_input: verdict,
  policy_output: verdict,
});
export type FirewallConfWire = z.infer<typeof FirewallConfSchema>;

/** PUT /firewall/conf body: every field optional (absent ones keep their value); flags `1`/`0` or `true`/`false`. */
export const FirewallConfBodySchema = z.object({
  internal_traffic: optionalParam,
  ip_forward: optionalParam,
  policy_forward: textParam,
  policy_input: textParam,
  policy_output: textParam,
});
export type FirewallConfBody = z.infer<typeof FirewallConfBodySchema>;

/** One filter rule of GET /firewall/rules/filter (the built-in `system_CONTROLPANEL` first). */
export const FilterRuleSchema = z.object({
  name: z.string(),
  action: verdict,
  chain: z.literal('INPUT'),
  protocol: z.enum(['TCP', 'UDP', 'ICMP', 'ANY']),
  s_ip: z.string(),
  d_ip: z.string(),
  s_port: z.string(),
  d_port: z.string(),
});
export type FilterRuleWire = z.infer<typeof FilterRuleSchema>;
export const FilterRuleListSchema = z.array(FilterRuleSchema);

/** POST /firewall/rules/filter/(top|end) body (checked with the spec's texts in its order by the service). */
export const FilterRuleBodySchema = z.object({
  name: textParam,
  action: textParam,
  chain: textParam,
  d_ip: textParam,
  d_port: textParam,
  protocol: textParam,
  s_ip: textParam,
  s_port: textParam,
});
export type FilterRuleBody = z.infer<typeof FilterRuleBodySchema>;

/** Path params of DELETE /firewall/rules/filter/<rule_name>. */
export const RuleNameParamsSchema = z.object({ rule_name: z.string() });

/** One entry of GET /firewall/rules/nat: the spec's fields, the DNAT target, the family and live counters. */
export const NatRuleSchema = z.object({
  name: z.string(),
  action: z.string(),
  chain: z.string(),
  s_ip: z.string(),
  d_ip: z.string(),
  'to-source': z.string(),
  'to-destination': z.string(),
  family: z.union([z.literal(4), z.literal(6)]),
  packets: z.number(),
  bytes: z.number(),
});
export type NatRule = z.infer<typeof NatRuleSchema>;
export const NatRuleListSchema = z.array(NatRuleSchema);

/** One entry of GET /firewall/rules/mangle: `name` is the account, plus its server, mark and live counters. */
export const MangleRuleSchema = z.object({
  name: z.string(),
  action: z.string(),
  chain: z.string(),
  s_ip: z.string(),
  d_ip: z.string(),
  'set-mark': z.string(),
  server: z.string(),
  mark: z.number().int(),
  packets: z.number(),
  bytes: z.number(),
});
export type MangleRule = z.infer<typeof MangleRuleSchema>;
export const MangleRuleListSchema = z.array(MangleRuleSchema);
