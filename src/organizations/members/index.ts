import { createRouter } from "../../platform/router";
import { listOrganizationMembers, removeOrganizationMember, updateOrganizationMember } from "./members.handlers";
import { listMembers, removeMember, replaceMember, updateMember } from "./members.routes";

export const organizationMembersRouter = createRouter()
  .openapi(listMembers, listOrganizationMembers)
  .openapi(updateMember, updateOrganizationMember)
  .openapi(replaceMember, updateOrganizationMember)
  .openapi(removeMember, removeOrganizationMember);
