import { z } from "@hono/zod-openapi";
import { PaginationQuery, paginated } from "../platform/pagination";
import { integerOrCurrentPathId } from "../platform/path-ids";
import { apiRoute, conflictResponse, jsonBody, jsonResponse } from "../platform/route";
import { Project, ProjectListItem, ProjectUpdateInput } from "./projects.schema";

const ProjectIdParams = z.object({ id: integerOrCurrentPathId("Project id, or `@current`.") });

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
  serviceKeys: true,
  tags: ["projects"],
  summary: "Retrieve a project the caller can see",
  request: { params: ProjectIdParams },
  responses: { 200: jsonResponse(Project, "The project") },
});

export const updateAccessibleProject = apiRoute({
  method: "patch",
  path: "/api/projects/{id}",
  scope: "project:write",
  serviceKeys: true,
  tags: ["projects"],
  summary: "Change a project's name and settings (admin or owner of its organization), with the rules of create",
  request: { params: ProjectIdParams, body: jsonBody(ProjectUpdateInput) },
  responses: { 200: jsonResponse(Project, "The project"), 409: conflictResponse },
});

export const replaceAccessibleProject = apiRoute({
  method: "put",
  path: "/api/projects/{id}",
  scope: "project:write",
  serviceKeys: true,
  tags: ["projects"],
  summary: "Update a project with PUT (admin or owner of its organization), as PATCH: fields left out are kept",
  request: { params: ProjectIdParams, body: jsonBody(ProjectUpdateInput) },
  responses: { 200: jsonResponse(Project, "The project"), 409: conflictResponse },
});

export const deleteAccessibleProject = apiRoute({
  method: "delete",
  path: "/api/projects/{id}",
  scope: "project:write",
  serviceKeys: true,
  tags: ["projects"],
  summary: "Delete a project (admin or owner of its organization), as the organization's route does",
  request: { params: ProjectIdParams },
  responses: { 204: { description: "Deleted" } },
});
