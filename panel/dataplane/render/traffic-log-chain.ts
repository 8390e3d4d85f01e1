// Pure rules of traffic logging's own mangle chains (NFLOG per selected connection state), as `iptables-save` prints them.
import { LOG_CHAINS, type Table } from './firewall-chains.ts';
import { emptyPlan, type RestorePlan } from './firewall-restore.ts';
import type { ChainContent } from './firewall-rules.ts';
import { chainRules, type CountedSnapshot } from './parse-iptables-save-counters.ts';

/** Connection states a rule can log, as `--nflog-prefix` names them (the spec's flag names). */
export const LOG_STATES = ['new', 'established', 'related', 'invalid', 'untracked'] as const;
export type LogState = (typeof LOG_STATES)[number];

/** What the chains log: the selected states, whether connections towards the peers count, the NFLOG group. */
export interface TrafficLogChainSpec {
  /** States to log (one rule each); none → the chains hold only the tunnel dispatch. */
  states: LogState[];
  /** Also log connections opened towards the tunnels (port forwards): packets leaving through them. */
  incoming: boolean;
  /** NFLOG group ulogd listens on (0-65535). */
  group: number;
  /** `--nflog-threshold`: packets the kernel queues before it hands a batch to ulogd (it also flushes on a timer). */
  threshold: number;
  /** Cap of the per-packet states (related, invalid, untracked) per rule: `-m limit --limit <n>/sec --limit-burst <2n>`. */
  perSecond: number;
  /** Tunnel interface patterns (`wg+` WireGuard, `ipsec+` charon's kernel-libipsec TUN). */
  tunnels: string[];
}

/** The chain the hooks jump to: dispatch of tunnel traffic to {@link LOG_STATE_CHAIN}. */
const LOG_CHAIN = LOG_CHAINS[0].chain;
/** The NFLOG rules, one per selected state. */
const LOG_STATE_CHAIN = `${LOG_CHAIN}-STATE`;
const TABLE: Table = 'mangle';

/**
 * The match of one state, chosen so that a connection is logged ONCE per state, not once per packet:
 * - `new`: the connection's first packet (`--connbytes 1:1` in the original direction: a retransmitted SYN or a
 *   second UDP datagram before any answer is still NEW but not logged again);
 * - `established`: the opener's second packet once the other side answered (`--ctdir ORIGINAL`, original-direction
 *   packet count 2: the ACK of a TCP handshake, the next datagram after a UDP answer);
 * - `related`, `invalid`, `untracked`: these have no (own) connection to count, so every packet is logged, capped
 *   by `-m limit` per rule (a flood costs at most `perSecond` records a second and state).
 */
function stateMatch(state: LogState, perSecond: number): string {
  const once = (n: number) => `-m connbytes --connbytes ${n}:${n} --connbytes-mode packets --connbytes-dir original`;
  const capped = `-m limit --limit ${perSecond}/sec --limit-burst ${perSecond * 2}`;
  switch (state) {
    case 'new':
      return `-m conntrack --ctstate NEW ${once(1)}`;
    case 'established':
      return `-m conntrack --ctstate ESTABLISHED --ctdir ORIGINAL ${once(2)}`;
    default:
      return `-m conntrack --ctstate ${state.toUpperCase()} ${capped}`;
  }
}

/**
 * The two chains of one family (identical for iptables and ip6tables): `VPNHOST-LOG` sends packets entering from a
 * tunnel (`-i wg+`, `-i ipsec+`; with `incoming` also those leaving into one) to `VPNHOST-LOG-STATE`, which holds
 * `-m conntrack --ctstate <STATE> ... -j NFLOG --nflog-prefix <state> --nflog-group <G> --nflog-threshold <T>` per
 * selected state. Entered from mangle FORWARD (routed traffic) and INPUT (traffic to the gateway itself), where the
 * conntrack state and the peer mark of mangle PREROUTING are known.
 */
export function renderTrafficLogChains(spec: TrafficLogChainSpec): ChainContent[] {
  const dispatch = spec.tunnels.map((t) => `-A ${LOG_CHAIN} -i ${t} -j ${LOG_STATE_CHAIN}`);
  if (spec.incoming) dispatch.push(...spec.tunnels.map((t) => `-A ${LOG_CHAIN} -o ${t} -j ${LOG_STATE_CHAIN}`));
  const nflog = `-j NFLOG --nflog-prefix %s --nflog-group ${spec.group} --nflog-threshold ${spec.threshold}`;
  const states = LOG_STATES.filter((s) => spec.states.includes(s))
    .map((s) => `-A ${LOG_STATE_CHAIN} ${stateMatch(s, spec.perSecond)} ${nflog.replace('%s', s)}`);
  return [
    { table: TABLE, chain: LOG_STATE_CHAIN, rules: states },
    { table: TABLE, chain: LOG_CHAIN, rules: dispatch },
  ];
}

/**
 * The restore plan that brings one family from `live` to `spec`: both chains filled and hooked from FORWARD and
 * INPUT; with `spec` null, the hook jumps deleted and both chains removed (nothing when already absent).
 */
export function trafficLogPlan(live: CountedSnapshot, spec: TrafficLogChainSpec | null): RestorePlan {
  const plan = emptyPlan();
  if (spec) {
    plan.chains.push(...renderTrafficLogChains(spec));
    plan.hooks.push(...LOG_CHAINS);
    return plan;
  }
  for (const hook of LOG_CHAINS) {
    const jump = `-A ${hook.hook} -j ${hook.chain}`;
    if ((chainRules(live, TABLE, hook.hook) ?? []).includes(jump)) plan.deleteRules.push({ table: TABLE, rule: jump });
  }
  // The state chain goes last: the dispatch chain refers to it until its own `-X`.
  plan.remove.push({ table: TABLE, chain: LOG_CHAIN }, { table: TABLE, chain: LOG_STATE_CHAIN });
  return plan;
}
