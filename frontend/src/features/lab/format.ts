/** How the Index Lab writes its numbers: counts, sizes and durations. */
export const fmtInt = (n: number) => Math.round(n).toLocaleString("en");
export const fmtBytes = (b: number) =>
  b >= 1024 ** 3
    ? `${(b / 1024 ** 3).toFixed(1)} GiB`
    : b >= 1024 ** 2
      ? `${(b / 1024 ** 2).toFixed(1)} MiB`
      : `${(b / 1024).toFixed(0)} KiB`;
export const fmtSeconds = (s: number) => (s < 0.01 ? `${(s * 1000).toFixed(1)} ms` : `${s.toFixed(2)} s`);
