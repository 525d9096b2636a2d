import { z } from "@hono/zod-openapi";
import { projectOfEnvironmentPath } from "./organization-projects.request";
import { Project, ProjectUpdateInput } from "./projects.schema";
import { conditionalRequestsOpenApi } from "../platform/conditional-requests";
import { ProjectParams } from "../platform/route-context";
import { apiRoute, conflictResponse, jsonBody, jsonResponse } from "../platform/route";

/**
 * PostHog's Team. Every project here has exactly one environment, with the project's id, name
 * and settings: the environment is the project seen from the environment tree.
 */
export const Environment = Project.extend({ project_id: z.number().int() }).openapi("Environment");
export type Environment = z.infer<typeof Environment>;

/** An environment's tag is its project's version. */
const conditional = conditionalRequestsOpenApi("project");

export const retrieveEnvironment = apiRoute({
  method: "get",
  path: "/api/environments/{project_id}",
  scope: "project:read",
  serviceKeys: true,
  tags: ["environments"],
  summary: "Retrieve an environment the caller can see (`@current` allowed)",
  request: { params: ProjectParams, headers: conditional.ifNoneMatch },
  responses: {
    200: { ...jsonResponse(Environment, "The environment"), headers: conditional.etag },
    304: conditional.notModified,
  },
});

/** PATCH, and PostHog's PUT, which takes the same fields (none required, those left out kept). */
const environmentUpdate = <const M extends "patch" | "put">(method: M, summary: string) =>
  apiRoute({
    method,
    path: "/api/environments/{project_id}",
    scope: "project:write",
    serviceKeys: true,
    context: "project",
    reads: projectOfEnvironmentPath,
    tags: ["environments"],
    summary,
    request: { params: ProjectParams, headers: conditional.ifMatch, body: jsonBody(ProjectUpdateInput) },
    responses: {
      200: { ...jsonResponse(Environment, "The environment"), headers: conditional.etag },
      409: conflictResponse,
      412: conditional.preconditionFailed,
    },
  });

export const updateEnvironment = environmentUpdate(
  "patch",
  "Change an environment's name and settings (admin or owner), as its project's PATCH",
);

export const replaceEnvironment = environmentUpdate(
  "put",
  "Update an environment with PUT (admin or owner), as its PATCH: fields left out are kept",
);

export const deleteEnvironment = apiRoute({
  method: "delete",
  path: "/api/environments/{project_id}",
  scope: "project:write",
  serviceKeys: true,
  tags: ["environments"],
  summary: "Delete an environment (admin or owner): its project, whose only environment it is, as its project's DELETE",
  request: { params: ProjectParams, headers: conditional.ifMatch },
  responses: { 204: { description: "Deleted" }, 412: conditional.preconditionFailed },
});
