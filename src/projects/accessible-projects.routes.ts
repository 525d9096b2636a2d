import { z } from "@hono/zod-openapi";
import { PaginationQuery, paginated } from "../platform/pagination";
import { conditionalRequestsOpenApi } from "../platform/conditional-requests";
import { integerOrCurrentPathId } from "../platform/path-ids";
import { apiRoute, conflictResponse, jsonBody, jsonResponse } from "../platform/route";
import { MembershipLevel } from "../platform/levels";
import { projectOfEnvironmentPath } from "./organization-projects.request";
import { projectToMove } from "./project-move.request";
import { ChangeOrganizationInput, Project, ProjectInput, ProjectListItem, ProjectUpdateInput } from "./projects.schema";

const conditional = conditionalRequestsOpenApi("project");

const ProjectIdParams = z.object({ project_id: integerOrCurrentPathId("Project id, or `@current`.") });

export const listAccessibleProjects = apiRoute({
  method: "get",
  path: "/api/projects",
  scope: "project:read",
  tags: ["projects"],
  summary: "List the projects the caller can see, across their organizations",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(paginated(ProjectListItem), "A page of projects") },
});

/**
 * PostHog's web app creates a project here, in the caller's current organization (`@current`). A
 * service key names its organization's path instead (`POST /api/organizations/{id}/projects`).
 */
export const createProjectInCurrentOrganization = apiRoute({
  method: "post",
  path: "/api/projects",
  scope: "project:write",
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["projects"],
  summary: "Create a project and its first environment in the caller's current organization (admin or owner)",
  request: { body: jsonBody(ProjectInput) },
  responses: {
    201: { ...jsonResponse(Project, "The project"), headers: conditional.etag },
    409: conflictResponse,
  },
});

export const retrieveAccessibleProject = apiRoute({
  method: "get",
  path: "/api/projects/{project_id}",
  scope: "project:read",
  serviceKeys: true,
  tags: ["projects"],
  summary: "Retrieve a project the caller can see",
  request: { params: ProjectIdParams, headers: conditional.ifNoneMatch },
  responses: {
    200: { ...jsonResponse(Project, "The project"), headers: conditional.etag },
    304: conditional.notModified,
  },
});

/** PATCH, and PostHog's PUT, which takes the same fields (none required, those left out kept). */
const accessibleProjectUpdate = <const M extends "patch" | "put">(method: M, summary: string) =>
  apiRoute({
    method,
    path: "/api/projects/{project_id}",
    scope: "project:write",
    serviceKeys: true,
    context: "project",
    reads: projectOfEnvironmentPath,
    tags: ["projects"],
    summary,
    request: { params: ProjectIdParams, headers: conditional.ifMatch, body: jsonBody(ProjectUpdateInput) },
    responses: {
      200: { ...jsonResponse(Project, "The project"), headers: conditional.etag },
      409: conflictResponse,
      412: conditional.preconditionFailed,
    },
  });

export const updateAccessibleProject = accessibleProjectUpdate(
  "patch",
  "Change a project's name and settings (admin or owner of its organization), with the rules of create",
);

export const replaceAccessibleProject = accessibleProjectUpdate(
  "put",
  "Update a project with PUT (admin or owner of its organization), as PATCH: fields left out are kept",
);

export const deleteAccessibleProject = apiRoute({
  method: "delete",
  path: "/api/projects/{project_id}",
  scope: "project:write",
  serviceKeys: true,
  tags: ["projects"],
  summary: "Delete a project (admin or owner of its organization), as the organization's route does",
  request: { params: ProjectIdParams, headers: conditional.ifMatch },
  responses: { 204: { description: "Deleted" }, 412: conditional.preconditionFailed },
});

/**
 * PostHog's web app moves a project here (its settings' danger zone). Admin or owner of both
 * organizations; not with a service key, which belongs to one organization.
 */
export const changeProjectOrganization = apiRoute({
  method: "post",
  path: "/api/projects/{project_id}/change_organization",
  scope: "project:write",
  context: "project",
  reads: projectToMove,
  tags: ["projects"],
  summary: "Move a project, with its environment, dashboards and batch exports, to another organization",
  request: {
    params: ProjectIdParams,
    body: jsonBody(ChangeOrganizationInput),
  },
  responses: {
    200: { ...jsonResponse(Project, "The project, in its new organization"), headers: conditional.etag },
    409: conflictResponse,
  },
});
