// Port forwards: external_ip:dst_port/protocol → peer:to_port, checked in the spec's order, stored, then applied.
import { FIREWALL_TEXTS } from '../dataplane/firewall/firewall-texts.ts';
import { ApiError, E } from '../http/errors.ts';
import type { TextScalar } from '../../shared/wire/common-wire.ts';
import { toInteger } from '../../shared/wire/form.ts';
import type { PortForward, PortForwardCreateBody, PortForwardMap } from '../schemas/port-forward.ts';
import type { AccountsRepository, AccountWithServer } from '../store/repositories/accounts.ts';
import type { PortForwardEntry, PortForwardsRepository, PortForwardValues } from '../store/repositories/port-forwards.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';
import { ChangeLane, type PolicySync } from './firewall.ts';
import { dataplaneRefusal } from './refusal.ts';

/** Collaborators of the port-forward service. */
export interface PortForwardServiceDeps {
  servers: ServersRepository;
  accounts: AccountsRepository;
  forwards: PortForwardsRepository;
  sync: PolicySync;
  /**
   * The panel's API TCP port (kept open by `system_CONTROLPANEL`), null when unknown. Checked here too, so that a
   * forward to a disabled peer (not handed to the firewall yet) cannot take it and fail the peer's enabling later.
   */
  apiPort?: number | null;
}

const PORT_MIN = 1;
const PORT_MAX = 65535;

/**
 * Port-forward operations behind `/wireguard/<name>/port_forward` (alias `port_forwarding`) and `/port_forward`.
 * The store is the desired state: a forward to a disabled peer stays stored and is in the data plane only while the
 * peer is enabled ({@link PortForwardsRepository.listForwards}); deleting the peer deletes its forwards (SQL cascade).
 */
export class PortForwardService {
  private readonly lane = new ChangeLane();

  constructor(private readonly deps: PortForwardServiceDeps) {}

  /** GET /wireguard/<name>/port_forward: the server's forwards keyed `<dst_port>_<protocol>`. */
  listOf(serverName: string): PortForwardMap {
    const server = this.requireServer(serverName);
    const out: PortForwardMap = {};
    for (const f of this.deps.forwards.listOfServer(server.id)) out[`${f.dst_port}_${f.protocol}`] = toWire(f);
    return out;
  }

  /**
   * POST /port_forward (or `/wireguard/<name>/port_forward`): the server named by the path or `wg_name` must exist,
   * then the spec's order of checks: protocol, dst_port range, pair already used (on any server), a listen port
   * that cannot be read, dst_port equal to a WireGuard listen port, to_port range, to_peer not an account (of the
   * named server). Stored, then the server's forwards are applied; a data-plane refusal removes the row again.
   */
  create(body: PortForwardCreateBody, serverName?: string): Promise<PortForward> {
    const { forwards, sync } = this.deps;
    return this.lane.run(async () => {
      const { target, values, peer } = await sync.serial(() => {
        const checked = checkForwardCreate(body, serverName, this.deps);
        forwards.insert(checked.values);
        return checked;
      });
      if (peer.status === 'enable') await this.apply(target, () => forwards.delete(target.id, values.dst_port, values.protocol));
      return { dst_port: values.dst_port, protocol: values.protocol, to_peer: peer.name, to_port: values.to_port };
    });
  }

  /**
   * DELETE /port_forward/<dst_port>/<protocol> (or under `/wireguard/<name>/`): dst_port checked first, then the
   * protocol, then the forward must exist (on the named server). Removed, then the server's forwards re-applied;
   * the row comes back on a data-plane failure.
   */
  remove(dstPortParam: string, protocolParam: string, serverName?: string): Promise<void> {
    const { forwards, servers, sync } = this.deps;
    return this.lane.run(async () => {
      const { target, row } = await sync.serial(() => {
        const server = serverName === undefined ? null : this.requireServer(serverName);
        const dstPort = /^\d{1,5}$/.test(dstPortParam) ? Number(dstPortParam) : NaN;
        if (!(dstPort >= PORT_MIN && dstPort <= PORT_MAX)) throw new ApiError(E.PF_INCORRECT_DST_PORT_PARAM);
        if (protocolParam !== 'tcp' && protocolParam !== 'udp') throw new ApiError(E.PF_INCORRECT_PROTOCOL_PARAM);
        const row = forwards.byPair(dstPort, protocolParam);
        if (!row || (server && row.server_id !== server.id)) throw new ApiError(E.PF_NO_SUCH);
        forwards.delete(row.server_id, row.dst_port, row.protocol);
        return { target: server ?? servers.getById(row.server_id)!, row };
      });
      if (row.status === 'enable') {
        await this.apply(target, () =>
          forwards.insert({ server_id: row.server_id, dst_port: row.dst_port, protocol: row.protocol, account_id: row.account_id, to_port: row.to_port }));
      }
    });
  }

  /** Hands the server's active forwards to the data plane; on a refusal runs `undo` (in the sync's lane) and throws. */
  private async apply(server: ServerRow, undo: () => void): Promise<void> {
    const { forwards, sync } = this.deps;
    try {
      await sync.applyForwards(server.name, forwards.listForwards(server.id));
    } catch (err) {
      await sync.serial(undo);
      throw dataplaneRefusal(err);
    }
  }

  private requireServer(name: string): ServerRow {
    return requireServer(this.deps.servers, name);
  }
}

function requireServer(servers: ServersRepository, name: string): ServerRow {
  const row = servers.get(name);
  if (!row) throw new ApiError(E.WIREGUARD_SERVER_NOT_FOUND);
  return row;
}

/** What the port-forward checks consult (indexed lookups only). */
export type ForwardCheckStores = Pick<PortForwardServiceDeps, 'servers' | 'accounts' | 'forwards' | 'apiPort'>;

/**
 * The checks of POST /port_forward in the spec's order (see {@link PortForwardService.create}): the named server
 * (path or `wg_name`) exists, protocol, dst_port range, pair already used (on any server), a listen port that cannot
 * be read, dst_port equal to a WireGuard listen port, the API port, to_port range, to_peer an account (of the named
 * server). Returns the row to store, its server and the peer; throws the spec's text.
 */
export function checkForwardCreate(
  body: PortForwardCreateBody,
  serverName: string | undefined,
  stores: ForwardCheckStores,
): { target: ServerRow; values: PortForwardValues; peer: AccountWithServer } {
  const { servers, accounts, forwards } = stores;
  const named = serverName ?? (body.wg_name === undefined ? undefined : String(body.wg_name));
  const server = named === undefined ? null : requireServer(servers, named);
  const protocol = body.protocol === 'tcp' || body.protocol === 'udp' ? body.protocol : null;
  if (!protocol) throw new ApiError(E.PF_PROTOCOL);
  const dstPort = port(body.dst_port, E.PF_DST_PORT_RANGE);
  if (forwards.byPair(dstPort, protocol)) throw new ApiError(E.PF_ALREADY_ENABLED);
  const listenPorts = servers.list().map((s) => s.listen_port);
  if (listenPorts.some((p) => !Number.isInteger(p) || p < PORT_MIN || p > PORT_MAX)) throw new ApiError(E.PF_LISTEN_PORT_ERROR);
  if (listenPorts.includes(dstPort)) throw new ApiError(E.PF_DST_IS_LISTEN_PORT);
  if (protocol === 'tcp' && dstPort === stores.apiPort) throw new ApiError(FIREWALL_TEXTS.DST_IS_API_PORT);
  const toPort = port(body.to_port, E.PF_TO_PORT_RANGE);
  const peer = body.to_peer === undefined ? undefined : accounts.get(String(body.to_peer));
  if (!peer || (server && peer.server_id !== server.id)) throw new ApiError(E.PF_INCORRECT_PEER);
  const target = server ?? servers.getById(peer.server_id)!;
  return { target, values: { server_id: target.id, dst_port: dstPort, protocol, account_id: peer.id, to_port: toPort }, peer };
}

/** A port 1-65535 given as integer text or number; anything else fails with `text`. */
function port(value: TextScalar | undefined, text: string): number {
  const n = value === undefined ? undefined : toInteger(value);
  if (n === undefined || n < PORT_MIN || n > PORT_MAX) throw new ApiError(text);
  return n;
}

function toWire(f: PortForwardEntry): PortForward {
  return { dst_port: f.dst_port, protocol: f.protocol, to_peer: f.to_peer, to_port: f.to_port };
}
