// Port-forward wire shapes (spec "PortForward") and the request bodies and path params of the port-forward routes.
import { z } from 'zod';
import { textParam } from '../../shared/wire/common-wire.ts';

/** One port forward as the panel returns it. */
export const PortForwardSchema = z.object({
  dst_port: z.number().int(),
  protocol: z.enum(['tcp', 'udp']),
  to_peer: z.string(),
  to_port: z.number().int(),
});
export type PortForward = z.infer<typeof PortForwardSchema>;

/** GET /wireguard/<name>/port_forward: forwards keyed `<dst_port>_<protocol>`. */
export const PortForwardMapSchema = z.record(z.string(), PortForwardSchema);
export type PortForwardMap = z.infer<typeof PortForwardMapSchema>;

/**
 * POST /port_forward body: dst_port, protocol, to_peer, to_port (required by the spec, checked with its texts in
 * its order); `wg_name` optionally names the server (the path form `/wireguard/<name>/port_forward` does too);
 * without it the server is the peer's.
 */
export const PortForwardCreateBodySchema = z.object({
  dst_port: textParam,
  protocol: textParam,
  to_peer: textParam,
  to_port: textParam,
  wg_name: textParam,
});
export type PortForwardCreateBody = z.infer<typeof PortForwardCreateBodySchema>;

/** Path params of DELETE /port_forward/<dst_port>/<protocol> (checked with the spec's texts by the service). */
export const PortForwardParamsSchema = z.object({ dst_port: z.string(), protocol: z.string() });
export type PortForwardParams = z.infer<typeof PortForwardParamsSchema>;

/** Path params of the server-scoped forms `/wireguard/<name>/port_forward/<dst_port>/<protocol>`. */
export const ServerPortForwardParamsSchema = PortForwardParamsSchema.extend({ name: z.string() });
