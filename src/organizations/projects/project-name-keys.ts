import { and, eq, ne, notExists, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { projects } from "../../db/schema";
import { inJsonList, type Database } from "../../platform/db";
import { NAME_KEY_VERSION, nameKey } from "../../platform/names";

/** Projects whose key one scheduled run recomputes; the next run takes the rest. */
const STALE_KEYS_PER_RUN = 100;

/**
 * A key computed by an older `nameKey`. The version is written into the SQL, not bound: only
 * then can SQLite see that the partial index `projects_stale_name_key` holds every such row.
 */
const staleKey = sql`${projects.nameKeyVersion} < ${sql.raw(String(NAME_KEY_VERSION))}`;

const otherProjects = alias(projects, "other_projects");

/** The project's key recomputed, unless another project of its organization already has that key. */
function recomputeKey(db: Database, project: { id: number; organizationId: string; name: string }) {
  const key = nameKey(project.name);
  const taken = db
    .select({ one: sql`1` })
    .from(otherProjects)
    .where(and(eq(otherProjects.organizationId, project.organizationId), eq(otherProjects.nameKey, key), ne(otherProjects.id, project.id)));
  return db
    .update(projects)
    .set({ nameKey: key, nameKeyVersion: NAME_KEY_VERSION })
    .where(and(eq(projects.id, project.id), staleKey, notExists(taken)));
}

/**
 * Recomputes, in one batch, the keys of projects whose key an older `nameKey` computed (names
 * stored before keys were NFKC and case folded). A rename meanwhile writes the current key and
 * version, so such a project is skipped. Two projects stored with names that are now one keep
 * both: the first recomputed takes the key, the other keeps its former key (marked current, so it
 * is not read again) until it is renamed. Returns how many rows were read; 0 means none is left.
 */
export async function recomputeStaleNameKeys(db: Database): Promise<number> {
  const rows = await db
    .select({ id: projects.id, organizationId: projects.organizationId, name: projects.name })
    .from(projects)
    .where(staleKey)
    .limit(STALE_KEYS_PER_RUN);
  const [first, ...rest] = rows.map((row) => recomputeKey(db, row));
  if (!first) return 0;
  const keptFormerKeys = db
    .update(projects)
    .set({ nameKeyVersion: NAME_KEY_VERSION })
    .where(and(inJsonList(projects.id, rows.map((row) => row.id)), staleKey))
    .returning({ id: projects.id });
  const results = await db.batch([first, ...rest, keptFormerKeys]);
  const kept = results.at(-1) as { id: number }[];
  if (kept.length > 0) {
    console.warn(`projects keeping their former name keys, as another project of their organization has the same name: ${kept.map(({ id }) => id).join(", ")}`);
  }
  return rows.length;
}
