// The panel wire schemas and error texts the VPN product's client uses, re-exported from the shared/ kernel (shared/wire).
export { AccountSchema, AccountListSchema, type Account } from '../../../../shared/wire/account.ts';
export { WireguardServerSchema, WireguardServerMapSchema, AvailableIpsSchema, type WireguardServer } from '../../../../shared/wire/wireguard.ts';
export { envelopeSchema, errorEnvelopeSchema, successStringSchema as SuccessSchema } from '../../../../shared/wire/envelope.ts';
export { systemStatusSchema as SystemStatusSchema, type SystemStatus } from '../../../../shared/wire/system.ts';
export { E as PANEL_ERRORS, OWN as PANEL_OWN_ERRORS } from '../../../../shared/wire/error-texts.ts';
export { TrafficStatisticsSchema, type TrafficStatisticsEntry } from '../../../../shared/wire/statistics.ts';
export { otlListSchema as OtlListSchema } from '../../../../shared/wire/otl.ts';
