import { createRouter } from "../../platform/router";
import {
  createOrganizationInvite,
  createOrganizationInvitesInBulk,
  deleteOrganizationInvite,
  listOrganizationInvites,
  resendOrganizationInviteEmail,
} from "./invites.handlers";
import { createInvite, createInvitesInBulk, deleteInvite, listInvites, resendInviteEmail } from "./invites.routes";

export const organizationInvitesRouter = createRouter()
  .openapi(listInvites, listOrganizationInvites)
  .openapi(createInvitesInBulk, createOrganizationInvitesInBulk)
  .openapi(createInvite, createOrganizationInvite)
  .openapi(deleteInvite, deleteOrganizationInvite)
  .openapi(resendInviteEmail, resendOrganizationInviteEmail);
