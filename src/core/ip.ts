/**
 * Node's own IP address checks (node:net's isIP, isIPv4, isIPv6), node:net required at each check
 * (node's module cache makes every call after the first a lookup) rather than at load. It helps
 * only when stdout is a file (or /dev/null): to a pipe or a terminal, node loads node:net for
 * stdout itself at the first write. Then it saves loading node:net, about 3 ms of CPU (medians
 * of 30 interleaved runs of `gracegate plan examples/haproxy.yaml > file`, 130 ms lazy vs 133 ms
 * eager), to the commands that never check an address.
 */
import type * as Net from 'node:net';

const net = (): typeof Net => require('node:net') as typeof Net;

export const isIP = (text: string): number => net().isIP(text);
export const isIPv4 = (text: string): boolean => net().isIPv4(text);
export const isIPv6 = (text: string): boolean => net().isIPv6(text);
