import { createRouter } from "../../platform/router";
import {
  createOrganizationInvite,
  createOrganizationInvitesInBulk,
  deleteOrganizationInvite,
  listOrganizationInvites,
} from "./invites.handlers";
import { createInvite, createInvitesInBulk, deleteInvite, listInvites } from "./invites.routes";

export const organizationInvitesRouter = createRouter()
  .openapi(listInvites, listOrganizationInvites)
  .openapi(createInvitesInBulk, createOrganizationInvitesInBulk)
  .openapi(createInvite, createOrganizationInvite)
  .openapi(deleteInvite, deleteOrganizationInvite);
