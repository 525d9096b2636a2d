import {
  ActivityLogEntry,
  ActivityLogPage,
  EntryIdParam,
  ProjectActivityLogQuery,
} from "../../platform/activity-log/activity-log.schema";
import { ProjectParams } from "../../platform/route-context";
import { apiRoute, jsonResponse as json } from "../../platform/route";
import type { ProjectTree } from "../project-trees";

/** A project's own entries, for everyone who can see the project. */
export const projectActivityLogRoute = (tree: ProjectTree) =>
  apiRoute({
    context: "project",
    method: "get",
    path: `${tree}/{project_id}/activity_log`,
    scope: "activity_log:read",
    serviceKeys: true,
    tags: ["activity log"],
    summary: "What changed in the project, newest first (cursor or numbered pages)",
    request: { params: ProjectParams, query: ProjectActivityLogQuery },
    responses: { 200: json(ActivityLogPage, "A page of the project's entries") },
  });

/** One of the project's entries by its id, for whoever its log shows it to. */
export const projectActivityLogEntryRoute = (tree: ProjectTree) =>
  apiRoute({
    context: "project",
    method: "get",
    path: `${tree}/{project_id}/activity_log/{id}`,
    scope: "activity_log:read",
    serviceKeys: true,
    tags: ["activity log"],
    summary: "One entry of the project's log, by its id: a stable URL for it",
    request: { params: ProjectParams.merge(EntryIdParam) },
    responses: { 200: json(ActivityLogEntry, "The entry") },
  });
