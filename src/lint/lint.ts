import { SEVERITY_RANK, type FailOn } from '../model/finding';
import { LintContext, type LintOptions } from './context';
import type { ManifestDocument } from './manifests';
import { objectsOf, type LintObject } from './objects';
import { LINT_RULES, UNKNOWN_IGNORE_RULE } from './registry';
import { plannedWorkloadNames, planTarget } from './rules/common';
import { PLAN_RULES } from './rules/plan-mismatch';
import type { LintFinding, LintFindingDraft, LintRule, SuppressedFinding } from './rule';
import { GracegateError } from '../core/errors';
import { pathText } from '../core/json';

/** Suppress rules on one object: `gracegate.dev/ignore: rule-id[,rule-id]`, with an optional reason. */
export const IGNORE_ANNOTATION = 'gracegate.dev/ignore';
export const IGNORE_REASON_ANNOTATION = 'gracegate.dev/ignore-reason';

export type LintReport = {
  findings: LintFinding[];
  suppressed: SuppressedFinding[];
  /** How many objects were read, for the summary line. */
  objects: number;
  /** What could not be read (`--cluster`: a kind the user may not list, with the API server's words). */
  unread?: string[];
};

function locate(rule: LintRule, d: LintFindingDraft): LintFinding {
  return {
    rule: rule.id,
    severity: d.severity ?? rule.severity,
    object: d.object.id,
    field: pathText(d.path),
    path: d.path,
    file: d.object.file,
    line: d.object.line(d.path),
    message: d.message,
    remediation: d.remediation,
    ...(d.numbers ? { numbers: d.numbers } : {}),
    ...(d.formula ? { formula: d.formula } : {}),
    ...(d.related
      ? { related: d.related.map((r) => ({ object: r.object.id, field: pathText(r.path), file: r.object.file, line: r.object.line(r.path) })) }
      : {}),
    ...(d.fix ? { fix: d.fix } : {}),
    ...(d.lbProbe
      ? {
          lbView: {
            statement: d.lbProbe.statement,
            source: d.lbProbe.source,
            object: d.lbProbe.evidence.object.id,
            field: pathText(d.lbProbe.evidence.path),
            file: d.lbProbe.evidence.object.file,
            line: d.lbProbe.evidence.object.line(d.lbProbe.evidence.path),
          },
        }
      : {}),
  };
}

/** The rule ids an object's annotations (its own, or its pod template's) suppress, and where. */
function ignoresOf(o: LintObject): { ids: string[]; reason: string; path: Array<string | number> } | undefined {
  const places: Array<Array<string | number>> = [
    ['metadata', 'annotations'],
    ['spec', 'template', 'metadata', 'annotations'],
  ];
  for (const place of places) {
    let v: unknown = o.value;
    for (const p of place) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[p as string] : undefined;
    const annotations = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
    const text = annotations[IGNORE_ANNOTATION];
    if (typeof text === 'string') {
      const reason = annotations[IGNORE_REASON_ANNOTATION];
      return {
        ids: text
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
        reason: typeof reason === 'string' && reason.trim() !== '' ? reason.trim() : `no ${IGNORE_REASON_ANNOTATION} given`,
        path: [...place, IGNORE_ANNOTATION],
      };
    }
  }
  return undefined;
}

/**
 * Lints parsed manifests: every rule over every object, suppressions applied, findings located on
 * the line of the field to change and sorted by object, then severity. Pure apart from reading
 * the documents it is given.
 */
export function lintDocuments(docs: readonly ManifestDocument[], options: LintOptions = {}): LintReport {
  const objects = objectsOf(docs);
  const ctx = new LintContext(objects, options);
  if (options.plan && !planTarget(ctx)) {
    const { namespace } = options.plan.plan.gateway;
    const name = plannedWorkloadNames(ctx).join("' or '");
    const gateways = ctx.gateways.map((p) => p.owner.id);
    throw new GracegateError(
      `no workload named '${name}' (namespace ${namespace}) with a container '${ctx.proxyContainer}' in the input, which ${options.plan.source} plans; ${gateways.length === 0 ? 'the input has no gateway workload' : `the gateways in the input: ${gateways.join(', ')}`}`,
    );
  }
  const raw = LINT_RULES.flatMap((rule) => rule.check(ctx).map((d) => ({ rule, draft: d })));

  const findings: LintFinding[] = [];
  const suppressed: SuppressedFinding[] = [];
  const ignores = new Map(objects.map((o) => [o, ignoresOf(o)] as const));
  for (const { rule, draft } of raw) {
    const ignore = ignores.get(draft.object);
    const finding = locate(rule, draft);
    if (ignore?.ids.includes(rule.id))
      suppressed.push({ ...finding, suppression: { annotation: `${IGNORE_ANNOTATION}: ${ignore.ids.join(',')}`, reason: ignore.reason } });
    else findings.push(finding);
  }
  const known = new Set(LINT_RULES.map((r) => r.id));
  for (const [o, ignore] of ignores) {
    for (const id of ignore?.ids ?? []) {
      if (known.has(id)) continue;
      findings.push(
        locate(UNKNOWN_IGNORE_RULE, {
          object: o,
          path: ignore!.path,
          message: `${IGNORE_ANNOTATION} names '${id}', which is not a gracegate lint rule: it suppresses nothing`,
          remediation: `use one of: ${[...known].join(', ')}`,
        }),
      );
    }
  }
  const order = new Map(objects.map((o, i) => [o.id, i] as const));
  const byPlace = (a: LintFinding, b: LintFinding) =>
    (order.get(a.object) ?? 0) - (order.get(b.object) ?? 0) ||
    SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
    a.line - b.line ||
    a.rule.localeCompare(b.rule);
  return { findings: findings.sort(byPlace), suppressed: suppressed.sort(byPlace), objects: objects.length };
}

/** The findings at or above `failOn` (what makes `gracegate lint` exit 1). */
export function failing(report: LintReport, failOn: FailOn): LintFinding[] {
  if (failOn === 'none') return [];
  return report.findings.filter((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK[failOn]);
}

/** The objects that belong to the planned gateway: its workload and Pods, Services, budget, autoscaler and sidecar ConfigMap. */
function plannedObjects(ctx: LintContext): Set<string> {
  const target = planTarget(ctx);
  if (!target) return new Set();
  const ids = [
    target.owner,
    ...ctx.servicesOf(target),
    ...ctx.budgetsOf(target),
    ctx.autoscalerOf(target),
    ctx.hcSidecar(target)?.configMap,
    ...ctx.objects.filter((o) => o.kind === 'Pod' && o.namespace === target.owner.namespace && o.name.startsWith(`${target.owner.name}-`)),
  ].flatMap((o) => (o ? [o.id] : []));
  return new Set(ids);
}

/**
 * Lints with several plans at once (`--spec DIR`): each gateway a spec plans is judged with that
 * plan (its LB, its numbers, plan-mismatch), every other object once without a plan. The options
 * in `plans` each carry one plan; `base` is what the others get (`--nodes`).
 */
export function lintWithPlans(docs: readonly ManifestDocument[], plans: readonly LintOptions[], base: LintOptions = {}): LintReport {
  if (plans.length === 0) return lintDocuments(docs, base);
  if (plans.length === 1) return lintDocuments(docs, plans[0]);
  const objects = objectsOf(docs);
  const claimed = new Set<string>();
  const parts: LintReport[] = [];
  for (const options of plans) {
    const mine = plannedObjects(new LintContext(objects, options));
    const report = lintDocuments(docs, options);
    const keep = (f: LintFinding) => mine.has(f.object) || PLAN_RULES.some((r) => r.id === f.rule);
    parts.push({ ...report, findings: report.findings.filter(keep), suppressed: report.suppressed.filter(keep) });
    for (const id of mine) claimed.add(id);
  }
  const rest = lintDocuments(docs, base);
  const free = (f: LintFinding) => !claimed.has(f.object);
  parts.push({ ...rest, findings: rest.findings.filter(free), suppressed: rest.suppressed.filter(free) });
  const order = new Map(objects.map((o, i) => [o.id, i] as const));
  const byPlace = (a: LintFinding, b: LintFinding) =>
    (order.get(a.object) ?? 0) - (order.get(b.object) ?? 0) ||
    SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
    a.line - b.line ||
    a.rule.localeCompare(b.rule);
  return {
    findings: parts.flatMap((p) => p.findings).sort(byPlace),
    suppressed: parts.flatMap((p) => p.suppressed).sort(byPlace),
    objects: objects.length,
  };
}
