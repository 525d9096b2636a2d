import { sql, type SQLWrapper } from "drizzle-orm";

/**
 * Whether `text` (an expression) holds `search`, case ignored: SQLite's lower() and upper() fold
 * ASCII alone, so the search is looked for lower-cased in the lower-cased text, upper-cased in the
 * upper-cased one (`élo` finds `Élodie` as `ÉLO` in `ÉLODIE`), and with both sides folded by
 * SQLite (`ÉLISée` finds `Élisée`: the accented letters as the name writes them). Only a text whose
 * accented letters mix cases, searched with them in other cases, is missed. A scan of each row
 * read: for short searches, or lists already bounded (an organization's members).
 */
export const holdsIgnoringCase = (text: SQLWrapper, search: string) =>
  sql`(instr(lower(${text}), ${search.toLowerCase()}) > 0 or instr(upper(${text}), ${search.toUpperCase()}) > 0
    or instr(lower(${text}), lower(${search})) > 0)`;
