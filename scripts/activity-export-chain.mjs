// Verifies an activity-log export (NDJSON or CSV) offline, as docs/activity-log.md states the
// algorithm: no dependencies, Web Crypto only, so that it runs in Node (verify-activity-export.mjs)
// and in the Worker's tests alike. It is written from the documentation, not from the service's
// code: the tests prove that both agree.

/** What an entry's hash covers, in this order: the stored values, `detail` as its stored text. */
export const CANONICAL_FIELDS = [
  "activity",
  "api_key_id",
  "created_at",
  "dashboard_id",
  "detail",
  "id",
  "is_system",
  "item_id",
  "organization_id",
  "project_id",
  "request_id",
  "scope",
  "seq",
  "user_id",
];

/** An exported entry's fields, in this order: what its hash covers, then `hash` and `previous_hash`. */
export const EXPORT_FIELDS = [...CANONICAL_FIELDS, "hash", "previous_hash"];

const sameFields = (keys) => keys.length === EXPORT_FIELDS.length && keys.every((key, i) => key === EXPORT_FIELDS[i]);

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** `hash` = hex(SHA-256(previous_hash + canonical JSON)). */
export async function entryHash(record) {
  const canonical = {};
  for (const field of CANONICAL_FIELDS) canonical[field] = record[field];
  return sha256Hex(record.previous_hash + JSON.stringify(canonical));
}

/**
 * NDJSON: one record per non-empty line, numbered from 1, each exactly the JSON of the export's
 * fields in their order: a field the hash does not cover, or a key given twice (a reader keeping
 * the first would read another value than the one hashed), is refused.
 */
function* ndjsonRecords(text) {
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index += 1) {
    if (lines[index] === "") continue;
    let record;
    try {
      record = JSON.parse(lines[index]);
    } catch {
      yield { line: index + 1, error: "not a JSON object" };
      continue;
    }
    if (record === null || typeof record !== "object" || Array.isArray(record)) {
      yield { line: index + 1, error: "not a JSON object" };
    } else if (!sameFields(Object.keys(record)) || JSON.stringify(record) !== lines[index]) {
      yield { line: index + 1, error: `not exactly the fields ${EXPORT_FIELDS.join(", ")}, once each` };
    } else {
      yield { line: index + 1, record };
    }
  }
}

/**
 * CSV cells as the export writes them: text quoted (`""` inside, newlines allowed), numbers and
 * booleans bare, null an empty bare cell. Yields each row with the line it starts on.
 */
function* csvRows(text) {
  let line = 1;
  let position = 0;
  while (position < text.length) {
    const start = line;
    const cells = [];
    for (;;) {
      let cell;
      if (text[position] === '"') {
        let value = "";
        position += 1;
        for (;;) {
          const quote = text.indexOf('"', position);
          if (quote < 0) throw new Error(`line ${start}: an unterminated quoted cell`);
          value += text.slice(position, quote);
          line += (text.slice(position, quote).match(/\n/g) ?? []).length;
          if (text[quote + 1] === '"') {
            value += '"';
            position = quote + 2;
          } else {
            position = quote + 1;
            break;
          }
        }
        cell = { quoted: true, value };
      } else {
        let end = position;
        while (end < text.length && text[end] !== "," && text[end] !== "\n") end += 1;
        cell = { quoted: false, value: text.slice(position, end) };
        position = end;
      }
      cells.push(cell);
      if (text[position] === ",") {
        position += 1;
        continue;
      }
      if (text[position] === "\n") {
        position += 1;
        line += 1;
      }
      break;
    }
    yield { line: start, cells };
  }
}

function typedCell(cell) {
  if (cell.quoted) return cell.value;
  if (cell.value === "") return null;
  if (cell.value === "true" || cell.value === "false") return cell.value === "true";
  if (/^-?\d+$/.test(cell.value)) return Number(cell.value);
  return { invalid: cell.value };
}

function* csvRecords(text) {
  const rows = csvRows(text);
  const header = rows.next();
  if (header.done) return;
  const columns = header.value.cells.map((cell) => cell.value);
  if (!sameFields(columns)) {
    yield { line: header.value.line, error: `the header is not ${EXPORT_FIELDS.join(",")}` };
    return;
  }
  for (const { line, cells } of rows) {
    if (cells.length !== columns.length) {
      yield { line, error: `${cells.length} cells where the header has ${columns.length}` };
      continue;
    }
    const record = Object.fromEntries(columns.map((column, index) => [column, typedCell(cells[index])]));
    const invalid = columns.find((column) => record[column] !== null && typeof record[column] === "object");
    yield invalid ? { line, error: `${invalid} is not a value` } : { line, record };
  }
}

/**
 * Checks every record of an export: its hash recomputed from its fields and `previous_hash`, each
 * record after the one before it in `seq`, and, where two records are consecutive numbers, the
 * second chained to the first (its `previous_hash` is the first's `hash`). An export of every
 * scope holds consecutive numbers only: `contiguous` then also fails on a missing number.
 *
 * Returns `{ valid, entries, first_seq, last_seq, head, gaps }`, or with `valid: false` the
 * `line` and `seq` where it first fails and the `reason`.
 */
export async function verifyExport(text, { format = "ndjson", contiguous = false } = {}) {
  const records = format === "csv" ? csvRecords(text) : ndjsonRecords(text);
  let previous = null;
  let entries = 0;
  let firstSeq = null;
  const gaps = [];
  const failure = (line, seq, reason) => ({ valid: false, line, seq, reason, entries });
  for (const item of records) {
    if (item.error) return failure(item.line, null, item.error);
    const { line, record } = item;
    if (!Number.isSafeInteger(record.seq)) return failure(line, null, "seq is not an integer");
    if (typeof record.previous_hash !== "string")
      return failure(line, record.seq, "the previous entry is missing from the chain");
    if ((await entryHash(record)) !== record.hash) return failure(line, record.seq, "hash does not match the entry");
    if (previous !== null) {
      if (record.seq <= previous.seq) return failure(line, record.seq, "out of order");
      if (record.seq === previous.seq + 1 && record.previous_hash !== previous.hash) {
        return failure(line, record.seq, "previous_hash is not the hash of the entry before it");
      }
      if (record.seq !== previous.seq + 1) {
        if (contiguous)
          return failure(line, record.seq, `entries ${previous.seq + 1} to ${record.seq - 1} are missing`);
        gaps.push([previous.seq + 1, record.seq - 1]);
      }
    }
    firstSeq ??= record.seq;
    previous = { seq: record.seq, hash: record.hash };
    entries += 1;
  }
  return { valid: true, entries, first_seq: firstSeq, last_seq: previous?.seq ?? null, head: previous, gaps };
}
