import { MembershipLevel } from "../platform/levels";
import { PaginationQuery, paginated } from "../platform/pagination";
import { integerOrCurrentPathId } from "../platform/path-ids";
import { apiRoute, conflictResponse, jsonResponse as json, jsonBody } from "../platform/route";
import { OrganizationParams } from "../platform/route-context";
import { conditionalRequestsOpenApi } from "../platform/conditional-requests";
import { Project, ProjectInput, ProjectListItem, ProjectUpdateInput } from "./projects.schema";
import { projectOfPath } from "./organization-projects.request";

const ProjectParams = OrganizationParams.extend({
  id: integerOrCurrentPathId("Project id, or `@current`."),
});

const conditional = conditionalRequestsOpenApi("project");

export const listProjects = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/projects",
  scope: "project:read",
  serviceKeys: true,
  context: "organization",
  tags: ["projects"],
  summary: "List the organization's projects the caller can see",
  request: { params: OrganizationParams, query: PaginationQuery },
  responses: { 200: json(paginated(ProjectListItem), "A page of projects") },
});

export const createProject = apiRoute({
  method: "post",
  path: "/api/organizations/{organization_id}/projects",
  scope: "project:write",
  serviceKeys: true,
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["projects"],
  summary: "Create a project and its first environment (admin or owner)",
  request: {
    params: OrganizationParams,
    body: jsonBody(ProjectInput),
  },
  responses: {
    201: { ...json(Project, "The project"), headers: conditional.etag },
    409: conflictResponse,
  },
});

export const retrieveProject = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/projects/{id}",
  scope: "project:read",
  serviceKeys: true,
  context: "organization",
  tags: ["projects"],
  summary: "Retrieve a project of the organization",
  request: { params: ProjectParams, headers: conditional.ifNoneMatch },
  responses: { 200: { ...json(Project, "The project"), headers: conditional.etag }, 304: conditional.notModified },
});

/** PATCH, and PostHog's PUT, which takes the same fields (none required, those left out kept). */
const projectUpdate = <const M extends "patch" | "put">(method: M, summary: string) =>
  apiRoute({
    method,
    path: "/api/organizations/{organization_id}/projects/{id}",
    scope: "project:write",
    serviceKeys: true,
    context: "organization",
    reads: projectOfPath,
    // No organization level: the handler needs the project's (an admin, or a member whose rule on
    // the project is `admin`), as on `/api/projects/{id}` and `/api/environments/{id}`.
    tags: ["projects"],
    summary,
    request: { params: ProjectParams, headers: conditional.ifMatch, body: jsonBody(ProjectUpdateInput) },
    responses: {
      200: { ...json(Project, "The project"), headers: conditional.etag },
      409: conflictResponse,
      412: conditional.preconditionFailed,
    },
  });

export const updateProject = projectUpdate(
  "patch",
  "Change a project's name and settings (admin or owner, or a member with an admin rule on it), as at creation",
);

export const replaceProject = projectUpdate(
  "put",
  "Update a project with PUT, as PATCH: no field is required, those left out are kept",
);

export const deleteProject = apiRoute({
  method: "delete",
  path: "/api/organizations/{organization_id}/projects/{id}",
  scope: "project:write",
  serviceKeys: true,
  context: "organization",
  reads: projectOfPath,
  tags: ["projects"],
  summary:
    "Delete a project (admin or owner, or a member with an admin rule on it): gone from every route at once, " +
    "its data removed in the background",
  request: { params: ProjectParams, headers: conditional.ifMatch },
  responses: { 204: { description: "Deleted" }, 412: conditional.preconditionFailed },
});
