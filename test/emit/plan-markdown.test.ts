import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderPlanMarkdown } from '../../src/emit/plan-markdown';
import { example } from './helpers';

describe('PLAN.md', () => {
  it('explains every timing, the timeline, the rollout and findings, and what the LB team needs', () => {
    const { plan, changes } = example('haproxy.yaml');
    const md = renderPlanMarkdown(plan, changes);
    assert.match(md, /^# Termination plan: istio-ingress\/igw-public$/m);
    assert.match(md, new RegExp(`\\*\\*Sequence: ${plan.sequence}\\.\\*\\*`));
    for (const [k, d] of Object.entries(plan.derivations)) {
      assert.ok(md.includes(`| \`${k}\` | ${d.value} s | ${d.formula.replace(/\|/g, '\\|')} |`), k);
    }
    assert.match(md, /## Timeline/);
    assert.match(md, /\| ≤ \d+ s \| \[4\] \| in-flight reaches zero \|/);
    assert.match(md, /## Rollout\n\nmaxSurge 1, maxUnavailable 0, anti-affinity required/);
    assert.match(md, /NodePort 30180 of Service `igw-public-gracegate-health` \(externalTrafficPolicy Local\), path `\/health_check\.html`/);
    assert.match(md, new RegExp(`terminationGracePeriodSeconds: ${plan.timings.terminationGracePeriodSeconds}`));
  });

  it('model nlb lists the controller annotations; findings appear as a table', () => {
    const { plan, changes } = example('nlb.yaml');
    const md = renderPlanMarkdown(plan, changes);
    assert.match(md, /service\.beta\.kubernetes\.io\/aws-load-balancer-healthcheck-path: "\/health_check\.html"/);
    const f5 = example('f5.yaml');
    const f5md = renderPlanMarkdown(f5.plan, f5.changes);
    if (f5.plan.findings.length > 0) assert.match(f5md, /\| severity \| id \| field \| message \| fix \|/);
    else assert.match(f5md, /## Findings\n\nNone\./);
  });
});
