// Parser of vici `list-sa` event messages (what `swanctl --list-sas --raw` prints) into IpsecSa entries.
import type { IpsecSa } from '../ipsec/ipsec.ts';
import type { ViciTree, ViciValue } from '../ipsec/linux/vici-client.ts';

function str(v: ViciValue | undefined): string {
  return typeof v === 'string' ? v : '';
}
function num(v: ViciValue | undefined): number {
  const n = Number(str(v));
  return Number.isFinite(n) ? n : 0;
}
function tree(v: ViciValue | undefined): ViciTree {
  return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
}

/**
 * One `list-sa` event holds one IKE SA keyed by its connection name: `{ "<conn>": { uniqueid, state, remote-host,
 * remote-id, remote-eap-id, remote-vips: [...], established, child-sas: { "<child>-<id>": { bytes-in, bytes-out } } } }`.
 */
export function parseListSa(event: ViciTree): IpsecSa[] {
  const out: IpsecSa[] = [];
  for (const [conn, value] of Object.entries(event)) {
    const sa = tree(value);
    let bytesIn = 0;
    let bytesOut = 0;
    for (const child of Object.values(tree(sa['child-sas']))) {
      bytesIn += num(tree(child)['bytes-in']);
      bytesOut += num(tree(child)['bytes-out']);
    }
    const vips = sa['remote-vips'];
    out.push({
      conn, uniqueId: str(sa.uniqueid), username: str(sa['remote-eap-id']) || str(sa['remote-id']), state: str(sa.state),
      remoteHost: str(sa['remote-host']), virtualIp: Array.isArray(vips) ? (vips[0] ?? '') : '',
      establishedSeconds: num(sa.established), bytesIn, bytesOut,
    });
  }
  return out;
}
