/**
 * The README's pictures of the three sequences ("Why the order matters"): docs/timeline/*.svg,
 * rendered from example specs, and a PNG screenshot of each as headless Chromium draws it, both
 * written by `node dist/test/emit/plan-pictures-main.js`. plan-svg.test.ts fails when a committed
 * SVG differs from what the renderer makes of its example now; test/pictures.test.ts when a PNG is
 * not the screenshot of the SVG beside it.
 *
 * Why a manifest and not a pixel comparison: the PNG is Chromium's rasterisation with the fonts
 * of the machine that took it, and a Chromium or font update changes its bytes without changing the
 * picture. What must hold is that each PNG was taken of the SVG that is committed now: the
 * manifest records the SVG's hash, the PNG's hash, the Chromium and the scale, and the test checks
 * the hashes and the PNG's size (the SVG's size times the scale). A stale PNG fails the test until
 * the script takes it again.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';

export const PLAN_PICTURES = [
  { file: 'docs/timeline/drain-first.svg', example: 'haproxy.yaml', sequence: 'drain-first' },
  { file: 'docs/timeline/health-first.svg', example: 'f5.yaml', sequence: 'health-first' },
  { file: 'docs/timeline/soft-drain.svg', example: 'haproxy-soft-drain.yaml', sequence: 'soft-drain' },
] as const;

export const picturePath = (file: string): string => join(REPO_ROOT, file);

/** The PNG beside each SVG, and the manifest that ties the two. */
export const pngOf = (svg: string): string => svg.replace(/\.svg$/, '.png');
export const SCREENSHOTS = 'docs/timeline/screenshots.json';
/** Device pixels per SVG pixel: sharp on a high-density screen, and GitHub scales it to the column. */
export const SCREENSHOT_SCALE = 2;

export type ScreenshotManifest = {
  writtenBy: string;
  chromium: string;
  scale: number;
  pictures: Array<{ svg: string; png: string; svgSha256: string; pngSha256: string; width: number; height: number }>;
};

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** A PNG's size from its IHDR chunk (bytes 16-23, big-endian), after checking the signature. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || png.toString('latin1', 1, 4) !== 'PNG' || png.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** An SVG document's width and height attributes, in px. */
export function svgSize(svg: string): { width: number; height: number } {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0] ?? '';
  return { width: Number(/\swidth="([\d.]+)"/.exec(root)?.[1]), height: Number(/\sheight="([\d.]+)"/.exec(root)?.[1]) };
}
