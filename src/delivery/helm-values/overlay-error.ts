import { GracegateError } from '../../core/errors';
/** The chart named in the spec cannot carry the pod changes through values; says what to do instead. */
export class OverlayUnsupportedError extends GracegateError {}
