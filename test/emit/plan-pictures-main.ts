/**
 * Rewrites docs/timeline/*.svg from their example specs, then takes a PNG screenshot of each in
 * headless Chromium and records them in docs/timeline/screenshots.json (see plan-pictures.ts).
 *   npm run build && node dist/test/emit/plan-pictures-main.js
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { renderPlanSvg } from '../../src/emit/plan-svg';
import { startChromium } from '../support/chromium';
import { example } from './helpers';
import { PLAN_PICTURES, picturePath, pngOf, SCREENSHOT_SCALE, SCREENSHOTS, sha256, svgSize, type ScreenshotManifest } from './plan-pictures';

async function main(): Promise<void> {
  for (const p of PLAN_PICTURES) {
    mkdirSync(dirname(picturePath(p.file)), { recursive: true });
    writeFileSync(picturePath(p.file), renderPlanSvg(example(p.example).plan));
    process.stdout.write(`wrote ${p.file}\n`);
  }
  const chromium = await startChromium({ width: 1280, height: 800 }, SCREENSHOT_SCALE);
  try {
    const manifest: ScreenshotManifest = {
      writtenBy: 'node dist/test/emit/plan-pictures-main.js',
      chromium: chromium.version,
      scale: SCREENSHOT_SCALE,
      pictures: [],
    };
    for (const p of PLAN_PICTURES) {
      const svg = readFileSync(picturePath(p.file), 'utf8');
      const { width, height } = svgSize(svg);
      await chromium.page.setViewportSize({ width: Math.ceil(width), height: Math.ceil(height) });
      await chromium.page.setContent(`<!doctype html><html><body style="margin:0;background:#fff">${svg}</body></html>`);
      const png = await chromium.page.locator('svg').screenshot();
      writeFileSync(picturePath(pngOf(p.file)), png);
      manifest.pictures.push({ svg: p.file, png: pngOf(p.file), svgSha256: sha256(svg), pngSha256: sha256(png), width, height });
      process.stdout.write(`wrote ${pngOf(p.file)}\n`);
    }
    writeFileSync(picturePath(SCREENSHOTS), `${JSON.stringify(manifest, null, 2)}\n`);
    process.stdout.write(`wrote ${SCREENSHOTS}\n`);
  } finally {
    await chromium.close();
  }
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
