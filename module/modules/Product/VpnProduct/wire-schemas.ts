// The panel wire schemas and error texts the VPN product's client uses, re-exported from panel/schemas.
export { AccountSchema, AccountListSchema, type Account } from '../../../../panel/schemas/account.ts';
export { WireguardServerSchema, WireguardServerMapSchema, AvailableIpsSchema, type WireguardServer } from '../../../../panel/schemas/wireguard.ts';
export { envelopeSchema, errorEnvelopeSchema, successStringSchema as SuccessSchema } from '../../../../panel/schemas/envelope.ts';
export { systemStatusSchema as SystemStatusSchema, type SystemStatus } from '../../../../panel/schemas/system.ts';
export { E as PANEL_ERRORS, OWN as PANEL_OWN_ERRORS } from '../../../../panel/schemas/error-texts.ts';
export { TrafficStatisticsSchema, type TrafficStatisticsEntry } from '../../../../panel/schemas/statistics.ts';
export { otlListSchema as OtlListSchema } from '../../../../panel/schemas/otl.ts';
