/**
 * A seeded pseudo-random source in [0, 1) (mulberry32): the same key gives the same numbers, so a
 * load mix or a simulation run can be repeated exactly.
 */
export function keyedRandom(key: number): () => number {
  let a = key >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
