export type { Sequence } from '../contract/hc';
