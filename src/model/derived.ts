/**
 * A number the plan emits together with how it was obtained, so every timing can explain itself:
 * the formula, each input's value, and where each input came from (the spec field the user set,
 * or the documented default the tool applied).
 */
export type InputValue = number | string | boolean;

export type DerivationInput = {
  value: InputValue;
  /** `spec.loadBalancer.inter` when the user set it; otherwise the default and its origin. */
  source: string;
};

export type Derived = {
  value: number;
  unit: 'seconds' | 'count';
  formula: string;
  inputs: Record<string, DerivationInput>;
};

/** The set of spec paths (dot-separated) the user wrote, to tell given values from defaults. */
export type GivenPaths = ReadonlySet<string>;

/** An input read from the spec: its source is the spec path if the user gave it, else `defaultSource`. */
export function specInput(given: GivenPaths, path: string, value: InputValue, defaultSource: string): DerivationInput {
  return { value, source: given.has(path) ? path : `default: ${defaultSource}` };
}

export function derived(value: number, formula: string, inputs: Record<string, DerivationInput>, unit: Derived['unit'] = 'seconds'): Derived {
  return { value, unit, formula, inputs };
}

/** Another derived number as an input: its value, and the plan's formula for it as its source. */
export function planInput(d: Derived): DerivationInput {
  return { value: d.value, source: `plan: ${d.formula}` };
}
