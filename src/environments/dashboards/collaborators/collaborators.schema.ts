import { z } from "@hono/zod-openapi";
import { dashboardPathId } from "../../../platform/path-ids";
import { ProjectParams } from "../../../platform/route-context";
import { UserBasic } from "../../../platform/user-basic";
import { PrivilegeLevel } from "../../../platform/access-rules/dashboard-rights";
import { Timestamp } from "../../../platform/timestamps";

export const Collaborator = z
  .object({
    id: z.string(),
    dashboard_id: z.number().int(),
    user: UserBasic,
    level: z.number().int().openapi({ description: "37: can edit." }),
    added_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("DashboardCollaborator");
export type Collaborator = z.infer<typeof Collaborator>;

export const AddCollaboratorInput = z
  .object({
    user_uuid: z.string().uuid(),
    level: z
      .union([z.literal(PrivilegeLevel.canView), z.literal(PrivilegeLevel.canEdit)])
      .openapi({ description: "Only 37 (can edit) may be given.", example: PrivilegeLevel.canEdit }),
  })
  .openapi("AddDashboardCollaborator");

export const CollaboratorsParams = ProjectParams.extend({
  dashboard_id: dashboardPathId,
});
export const CollaboratorParams = CollaboratorsParams.extend({
  user__uuid: z.string().openapi({ description: "The collaborator's user uuid." }),
});
