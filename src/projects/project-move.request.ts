import { peekJsonBody } from "../platform/request-body";
import { projectRead, routeReads } from "../platform/route-context";
import { selectDestination } from "./project-move";
import { selectProjectOfEnvironment } from "./projects.queries";
import { ChangeOrganizationInput } from "./projects.schema";

/**
 * The project the path names, as read, and the caller's membership of the organization the body
 * names, read with the project's context: a kept answer of the move is replayed only to a caller
 * who still sees the project, and a retry after `@current` changed is another request.
 */
export const projectToMove = routeReads(async (c) => {
  const body = await peekJsonBody(c, ChangeOrganizationInput);
  const peeked = body?.organization_id ?? "";
  const { db, actor } = c.var;
  const [[row], [destination]] = await projectRead(c, (environmentId) => [
    selectProjectOfEnvironment(db, actor, environmentId),
    selectDestination(db, actor, peeked),
  ]);
  return { row, peeked, destination };
});
