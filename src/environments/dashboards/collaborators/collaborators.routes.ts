import { z } from "@hono/zod-openapi";
import { collaborationOfPath, collaborationToAdd } from "./collaborators.request";
import { apiRoute, jsonBody, jsonResponse as json } from "../../../platform/route";
import type { ProjectTree } from "../../project-trees";
import { AddCollaboratorInput, Collaborator, CollaboratorParams, CollaboratorsParams } from "./collaborators.schema";

/** The collaborator routes of one tree; `tree` only changes the path. */
export function collaboratorRoutes<T extends ProjectTree>(tree: T) {
  const collection = `${tree}/{project_id}/dashboards/{dashboard_id}/collaborators` as const;
  const tags = ["dashboards"];
  return {
    list: apiRoute({
      tags,
      context: "project",
      method: "get",
      path: collection,
      scope: "dashboard:read",
      serviceKeys: true,
      summary: "List a dashboard's collaborators, oldest first (a plain array)",
      request: { params: CollaboratorsParams },
      responses: { 200: json(z.array(Collaborator), "The collaborators") },
    }),
    add: apiRoute({
      tags,
      context: "project",
      reads: collaborationToAdd,
      method: "post",
      path: collection,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Let a member edit a dashboard restricted to collaborators (restriction level 37)",
      request: { params: CollaboratorsParams, body: jsonBody(AddCollaboratorInput) },
      responses: { 201: json(Collaborator, "The collaborator") },
    }),
    remove: apiRoute({
      tags,
      context: "project",
      reads: collaborationOfPath,
      method: "delete",
      path: `${collection}/{user__uuid}`,
      scope: "dashboard:write",
      serviceKeys: true,
      summary: "Remove a collaborator: their edit right ends at once",
      request: { params: CollaboratorParams },
      responses: { 204: { description: "Removed" } },
    }),
  };
}
