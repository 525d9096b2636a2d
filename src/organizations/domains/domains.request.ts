import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { organizationRead, routeReads } from "../../platform/route-context";
import { selectDomain } from "./domains.queries";

/** The domain the path names, read in the round trip that resolves the organization. */
export function readDomainOfPath(c: Context<AppEnv>) {
  const read = organizationRead(c);
  return read.batch([selectDomain(read, c.req.param("id") ?? "")]);
}

/** A PATCH's or a verification's domain, read before its body. */
export const domainOfPath = routeReads(readDomainOfPath);
