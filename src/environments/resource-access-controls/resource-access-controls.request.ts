import type { RuleSubject } from "../../platform/access-controls/rule-subject";
import { peekJsonBody } from "../../platform/request-body";
import { projectRead, routeReads } from "../../platform/route-context";
import * as queries from "./resource-access-controls.queries";
import { PutResourceAccessControlInput } from "./resource-access-controls.schema";

/** The rule a PUT body names (its kind and subject), read with the project: the write is the second round trip. */
export const typeRuleToPut = routeReads(async (c) => {
  const body = await peekJsonBody(c, PutResourceAccessControlInput);
  const resource = body?.resource ?? "";
  const subject: RuleSubject = { membershipId: body?.organization_member ?? null, roleId: body?.role ?? null };
  return {
    resource,
    subject,
    results: await projectRead(c, (environmentId) => [...queries.putReads(c.var.db, environmentId, resource, subject)]),
  };
});
