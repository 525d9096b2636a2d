import { createRouter } from "../../platform/router";
import {
  createOrganizationRole,
  createOrganizationRoleMembership,
  deleteOrganizationRole,
  deleteOrganizationRoleMembership,
  listOrganizationRoleMemberships,
  listOrganizationRoles,
  retrieveOrganizationRole,
  retrieveOrganizationRoleMembership,
  updateOrganizationRole,
} from "./roles.handlers";
import {
  createRole,
  createRoleMembership,
  deleteRole,
  deleteRoleMembership,
  listRoleMemberships,
  listRoles,
  retrieveRole,
  retrieveRoleMembership,
  updateRole,
} from "./roles.routes";

export const organizationRolesRouter = createRouter()
  .openapi(listRoles, listOrganizationRoles)
  .openapi(createRole, createOrganizationRole)
  .openapi(retrieveRole, retrieveOrganizationRole)
  .openapi(updateRole, updateOrganizationRole)
  .openapi(deleteRole, deleteOrganizationRole)
  .openapi(listRoleMemberships, listOrganizationRoleMemberships)
  .openapi(createRoleMembership, createOrganizationRoleMembership)
  .openapi(retrieveRoleMembership, retrieveOrganizationRoleMembership)
  .openapi(deleteRoleMembership, deleteOrganizationRoleMembership);
