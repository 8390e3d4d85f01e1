// Error texts of our own for firewall cases the spec gives no text for (the seed texts stay in error-texts.ts).

/** Texts the firewall raises besides the spec's seed texts; the API answers them as they are. */
export const FIREWALL_TEXTS = {
  WRONG_SUBNET: 'Wrong subnet format (CIDR)',
  WRONG_MARK: 'Wrong mark (1-16777215)',
  MARK_IN_USE: 'Mark already in use',
  DST_IS_API_PORT: 'DstPort cannot be the panel API port',
  WRONG_ACTION: 'Wrong action (ACCEPT or DROP)',
  WRONG_PROTOCOL: 'Wrong protocol (TCP, UDP, ICMP or ANY)',
  WRONG_RULE_PORT: 'Wrong port format (0-65535)',
  MIXED_FAMILIES: 'Source and destination IP must be of one family',
  WRONG_EXTERNAL_INTERFACE: 'Wrong external interface name',
  WRONG_IPSEC_DEVICE: 'Wrong IKEv2 device name',
} as const;
