/**
 * Node's own IP address checks (node:net's isIP, isIPv4, isIPv6), node:net loaded at the first
 * check: loading it took about 15 ms of `gracegate plan`'s start-up (a CPU profile; issue 48's
 * budget is 2x `node -e 0`), and most commands never check an address.
 */
import type * as Net from 'node:net';

let net: typeof Net | undefined;
const lib = (): typeof Net => (net ??= require('node:net') as typeof Net);

export const isIP = (text: string): number => lib().isIP(text);
export const isIPv4 = (text: string): boolean => lib().isIPv4(text);
export const isIPv6 = (text: string): boolean => lib().isIPv6(text);
