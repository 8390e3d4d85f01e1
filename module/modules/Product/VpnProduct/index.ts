// Entry of the VpnProduct module for the platform loader.
export { VpnProduct } from './vpn-product.ts';
