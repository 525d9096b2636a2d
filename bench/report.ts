import { api, readCost } from "../test/support/harness";

export type Measurement = { label: string; small: Cost; large: Cost };
type Cost = ReturnType<typeof readCost>;

/**
 * The D1 cost of one request, with the key already in the KV cache; a read is sent twice and
 * measured the second time, when the isolate knows the key's `@current` project too.
 */
export async function measure(method: string, path: string, key: string, body?: unknown): Promise<Cost> {
  await api(method === "GET" ? method : "GET", method === "GET" ? path : "/api/users/@me", { key });
  const response = await api(method, path, { key, body });
  if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
  return response.cost;
}

const ratio = (large: number, small: number) => (small === 0 ? "-" : (large / small).toFixed(2));

/**
 * One line per request: queries and rows read for the small and the large data set, and ratios;
 * rows written too for writes (D1 bills a row written like 1,000 read).
 */
export function report(
  title: string,
  sizes: [number, number],
  measurements: Measurement[],
  options: { written?: boolean } = {},
) {
  const [small, large] = sizes;
  const lines = measurements.map(
    (m) =>
      `${m.label.padEnd(50)} queries ${m.small.queries} -> ${m.large.queries}` +
      ` (x${ratio(m.large.queries, m.small.queries)})` +
      `   rows_read ${m.small.rowsRead} -> ${m.large.rowsRead} (x${ratio(m.large.rowsRead, m.small.rowsRead)})` +
      (options.written ? `   rows_written ${m.small.rowsWritten} -> ${m.large.rowsWritten}` : ""),
  );
  console.log(`\n${title}: ${small} vs ${large} items\n${lines.join("\n")}\n`);
}
