/** A chart version as `major.minor`, for "which values keys does this chart have" questions. */
export type ChartVersion = { major: number; minor: number };

export function chartVersion(version: string): ChartVersion {
  const [major, minor] = version.split('.').map((n) => Number.parseInt(n, 10));
  return { major: major ?? 0, minor: minor ?? 0 };
}

export function atLeast(v: ChartVersion, major: number, minor: number): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}
