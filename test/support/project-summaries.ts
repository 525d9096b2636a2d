/**
 * What an organization's `project_summaries` should hold, computed from its projects and their
 * default rules as SQL returns them; shared by the test in workerd and the migration's in Node.
 */

/** A `projects` row as SQL returns it, with its default rule's level (`default_access`). */
export type ProjectSummaryRow = {
  id: number;
  uuid: string;
  api_token: string;
  name: string;
  completed_snippet_onboarding: number;
  has_completed_onboarding_for: string | null;
  ingested_event: number;
  is_demo: number;
  timezone: string;
  access_control: number;
  position: number;
  default_access: string | null;
};

const SHARD_SIZE = 128;

/** JSON with every object's keys sorted: equal values, equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

function expectedSummary(project: ProjectSummaryRow) {
  return {
    id: project.id,
    uuid: project.uuid,
    api_token: project.api_token,
    name: project.name,
    completed_snippet_onboarding: project.completed_snippet_onboarding,
    has_completed_onboarding_for: project.has_completed_onboarding_for === null ? null : JSON.parse(project.has_completed_onboarding_for),
    ingested_event: project.ingested_event,
    is_demo: project.is_demo,
    timezone: project.timezone,
    access_control: project.access_control,
    ...(project.default_access === null ? {} : { default_access: project.default_access }),
  };
}

/** Each way the shards differ from the projects: a project missing, misplaced or stale, an empty shard. */
export function summariesThatDisagree(projects: ProjectSummaryRow[], shards: { shard: number; projects: string }[]) {
  const problems: string[] = [];
  const stored = new Map(shards.map((row) => [row.shard, JSON.parse(row.projects) as Record<string, Record<string, unknown>>]));
  for (const [shard, summaries] of stored) if (Object.keys(summaries).length === 0) problems.push(`shard ${shard} is empty`);
  const expectedShards = new Map<number, Record<string, unknown>>();
  for (const project of projects) {
    const shard = Math.floor((project.position - 1) / SHARD_SIZE);
    expectedShards.set(shard, { ...expectedShards.get(shard), [project.id]: expectedSummary(project) });
  }
  for (const shard of new Set([...stored.keys(), ...expectedShards.keys()])) {
    const held = stored.get(shard) ?? {};
    const expected = expectedShards.get(shard) ?? {};
    for (const id of new Set([...Object.keys(held), ...Object.keys(expected)])) {
      // A default rule removed leaves `default_access` absent or null: both mean none.
      const { default_access: heldDefault, ...heldRest } = held[id] ?? {};
      const normalized = held[id] && { ...heldRest, ...(heldDefault == null ? {} : { default_access: heldDefault }) };
      if (canonical(normalized) !== canonical(expected[id])) {
        problems.push(`project ${id} in shard ${shard}: ${JSON.stringify(held[id])}, expected ${JSON.stringify(expected[id])}`);
      }
    }
  }
  return problems;
}
