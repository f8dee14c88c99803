/** Where a command writes: its result to `out`, what went wrong to `err`. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** Exit statuses of every command. */
export const EXIT = Object.freeze({ done: 0, refused: 1, usage: 2 });
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Rows under a header, columns padded to their widest cell (the last one is not padded). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [header, ...rows].map(line).join('\n') + '\n';
}

/** One JSON object a line. */
export const jsonLines = (values: readonly object[]): string => values.map((v) => `${JSON.stringify(v)}\n`).join('');
