import { sql } from "drizzle-orm";
import { projects } from "../db/schema";
import type { ReadInBatch } from "../platform/activity-log/record";
import { resourceActivity } from "../platform/activity-log/resource-activity";
import { type Project, ProjectUpdateInput } from "./projects.schema";

/** The fields a PATCH can change (its privacy, `access_control`, among them); never a project's tokens. */
const PROJECT_TRACKED_FIELDS = Object.keys(ProjectUpdateInput.shape);

/**
 * Projects are created and updated; an entry names the project and carries its id as `project_id`.
 * A Slack incoming-webhook URL lets whoever holds it post to the channel: its entries say only
 * that it changed, so that neither the log nor what it feeds to receivers keeps one replaced.
 */
export const projectActivity = resourceActivity("Project", {
  fields: PROJECT_TRACKED_FIELDS,
  secretFields: ["slack_incoming_webhook"],
});

/** The tracked fields of a project as the API shows it. */
export const trackedProjectFields = (project: Project): Record<string, unknown> =>
  Object.fromEntries(PROJECT_TRACKED_FIELDS.map((field) => [field, project[field as keyof Project]]));

export const projectItem = (organizationId: string, projectId: number | ReadInBatch, name: string | ReadInBatch) => ({
  organizationId,
  projectId,
  itemId: projectId,
  name,
});

/** A created project's id and name, read when its entry is appended: the INSERT chose both. */
export const createdProjectIdInBatch = (uuid: string): ReadInBatch =>
  sql`select ${projects.id} from ${projects} where ${projects.uuid} = ${uuid}`;
export const createdProjectNameInBatch = (uuid: string): ReadInBatch =>
  sql`select ${projects.name} from ${projects} where ${projects.uuid} = ${uuid}`;
