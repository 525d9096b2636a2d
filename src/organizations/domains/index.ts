import { createRouter } from "../../platform/router";
import {
  createOrganizationDomain,
  deleteOrganizationDomain,
  listOrganizationDomains,
  retrieveOrganizationDomain,
  updateOrganizationDomain,
  verifyOrganizationDomain,
} from "./domains.handlers";
import {
  createDomain,
  deleteDomain,
  listDomains,
  replaceDomain,
  retrieveDomain,
  updateDomain,
  verifyDomain,
} from "./domains.routes";

export const organizationDomainsRouter = createRouter()
  .openapi(listDomains, listOrganizationDomains)
  .openapi(createDomain, createOrganizationDomain)
  .openapi(retrieveDomain, retrieveOrganizationDomain)
  .openapi(updateDomain, updateOrganizationDomain)
  .openapi(replaceDomain, updateOrganizationDomain)
  .openapi(deleteDomain, deleteOrganizationDomain)
  .openapi(verifyDomain, verifyOrganizationDomain);
