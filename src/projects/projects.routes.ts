import { z } from "@hono/zod-openapi";
import { integerOrCurrentPathId } from "../platform/path-ids";
import { Project, ProjectListItem } from "../organizations/projects/projects.schema";
import { paginated, PaginationQuery } from "../platform/pagination";
import { apiRoute, jsonResponse } from "../platform/route";

export const listAccessibleProjects = apiRoute({
  method: "get",
  path: "/api/projects",
  scope: "project:read",
  tags: ["projects"],
  summary: "List the projects the caller can see, across their organizations",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(paginated(ProjectListItem), "A page of projects") },
});

export const retrieveAccessibleProject = apiRoute({
  method: "get",
  path: "/api/projects/{id}",
  scope: "project:read",
  tags: ["projects"],
  summary: "Retrieve a project the caller can see",
  request: { params: z.object({ id: integerOrCurrentPathId("Project id, or `@current`.") }) },
  responses: { 200: jsonResponse(Project, "The project") },
});
