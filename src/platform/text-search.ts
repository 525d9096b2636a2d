import { z } from "@hono/zod-openapi";
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";

/**
 * `?search=` as the lists read it: trimmed, its first 200 characters (PostHog's cap: longer text
 * is cut, not refused; a phrase also costs FTS5 its length times the places its trigrams occur in
 * a row), or none.
 */
export const searchText = (sent: string | undefined) => [...(sent?.trim() ?? "")].slice(0, 200).join("") || undefined;

/** FTS5's trigram tokenizer matches a phrase of at least this many characters (see migrations/). */
const TRIGRAM = 3;

/** The search where it is long enough for a trigram index; a shorter one is tested on each row read. */
export const indexedSearch = (search: string | undefined) =>
  search !== undefined && [...search].length >= TRIGRAM ? search : undefined;

/** Text as FTS5 reads it inside a quoted phrase: quotes doubled, and no NUL, which would end the query. */
const quoted = (text: string) => text.replace(/"/g, '""').replace(/\0/g, "\uFFFD");

/**
 * The FTS5 query (an expression) of the rows of one scope (each index row holds its scope, as
 * `<id>`, in its `scope` column; `scope` may be a query of it, which matches nothing where it
 * finds none) whose `columns` hold `search`: quoted phrases, so that nothing in the scope or the
 * search is FTS5 syntax. The trigram tokenizer matches any substring, case ignored.
 */
export function trigramMatch(scope: SQL | string | number, columns: string[], search: string): SQL {
  const rest = `>" AND {${columns.join(" ")}} : "${quoted(search)}"`;
  // A number is written into the text here: D1 may bind it as a real, which SQLite writes `5.0`.
  if (typeof scope !== "object") return sql`${`scope : "<${quoted(String(scope))}${rest}`}`;
  return sql`('scope : "<' || replace(coalesce(${scope}, ''), '"', '""') || ${rest})`;
}

/** `?search=`'s schema: DRF's refusal of a NUL, which FTS5 would read as the end of its query. */
export const SearchQuery = z
  .string()
  .refine((value) => !value.includes("\u0000"), { error: "Null characters are not allowed." })
  .optional();

/**
 * Whether `text` (an expression) holds `search`, case ignored: SQLite's lower() and upper() fold
 * ASCII alone, so the search is looked for lower-cased in the lower-cased text, upper-cased in the
 * upper-cased one (`élo` finds `Élodie` as `ÉLO` in `ÉLODIE`), and with both sides folded by
 * SQLite (`ÉLISée` finds `Élisée`: the accented letters as the name writes them). Only a text whose
 * accented letters mix cases, searched with them in other cases, is missed. A scan of each row
 * read: for searches too short for a trigram index.
 */
export const holdsIgnoringCase = (text: SQLWrapper, search: string) =>
  sql`(instr(lower(${text}), ${search.toLowerCase()}) > 0 or instr(upper(${text}), ${search.toUpperCase()}) > 0
    or instr(lower(${text}), lower(${search})) > 0)`;
