import { organizationRead, routeReads } from "../../platform/route-context";
import { selectKeyToBlock } from "./api-keys.queries";

/** The key the path names, read with the caller's membership. */
export const keyToBlock = routeReads(async (c) => {
  const read = organizationRead(c);
  const [[key]] = await read.batch([selectKeyToBlock(read, c.req.param("id") ?? "")]);
  return key;
});
