// Types of activity-export-chain.mjs, for the tests that verify exports with it.
export const CANONICAL_FIELDS: string[];

export type ExportVerdict =
  | {
      valid: true;
      entries: number;
      first_seq: number | null;
      last_seq: number | null;
      head: { seq: number; hash: string } | null;
      /** Missing numbers between records, as [first, last] ranges (a filtered export has them). */
      gaps: [number, number][];
    }
  | { valid: false; line: number; seq: number | null; reason: string; entries: number };

export function entryHash(record: Record<string, unknown>): Promise<string>;

export function verifyExport(
  text: string,
  options?: { format?: "ndjson" | "csv"; contiguous?: boolean },
): Promise<ExportVerdict>;
