import { organizationRead, routeReads } from "../../platform/route-context";
import { memberReads } from "./members.queries";

const ME = "@me";

/**
 * The member the path names (`@me`: the caller) and how many owners the organization has, read
 * in the round trip that resolves the organization.
 */
export const memberOfPath = routeReads((c) => {
  const requested = c.req.param("user__uuid") ?? "";
  const read = organizationRead(c);
  return read.batch([
    ...memberReads(read.db, read.organizationId, requested === ME ? c.var.actor.userUuid : requested),
  ]);
});
