import type { z } from "@hono/zod-openapi";
import { peekJsonBody } from "../../platform/request-body";
import { organizationRead, routeReads } from "../../platform/route-context";
import { inputsOf, inviteContextStatements, type PreloadedInviteContext } from "./invites.queries";
import { BulkInviteInput, InviteInput } from "./invites.schema";

/**
 * The organization and what validating the invites needs, as the body will read them, in one
 * round trip: the write is the second.
 */
const inviteReads = (schema: z.ZodType<InviteInput | InviteInput[]>) =>
  routeReads(async (c): Promise<PreloadedInviteContext> => {
    const body = await peekJsonBody(c, schema);
    const read = organizationRead(c);
    const statements = inviteContextStatements(read.db, read.organizationId, c.var.actor.userId, inputsOf(body));
    return { body, results: await read.batch(statements) };
  });
export const oneInviteReads = inviteReads(InviteInput);
export const bulkInviteReads = inviteReads(BulkInviteInput);
