import { z } from "@hono/zod-openapi";
import { MembershipLevel } from "../platform/levels";

/** A union of literals, not `z.literal([...])`, which the OpenAPI generator publishes as its first value only. */
export const MembershipLevelField = z
  .union([z.literal(MembershipLevel.member), z.literal(MembershipLevel.admin), z.literal(MembershipLevel.owner)])
  .openapi({ description: "1 member, 8 admin, 15 owner." });
