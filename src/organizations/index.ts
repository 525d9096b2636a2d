import { createRouter } from "../platform/router";
import {
  createCallerOrganization,
  listCallerOrganizations,
  retrieveCallerOrganization,
} from "./organizations.handlers";
import { createOrganization, listOrganizations, retrieveOrganization } from "./organizations.routes";
import { organizationBatchExportsRouter } from "./batch-exports";
import { organizationDomainsRouter } from "./domains";
import { organizationInvitesRouter } from "./invites";
import { organizationMembersRouter } from "./members";
import { organizationProjectsRouter } from "./projects";

export const organizationsRouter = createRouter()
  .openapi(listOrganizations, listCallerOrganizations)
  .openapi(createOrganization, createCallerOrganization)
  .openapi(retrieveOrganization, retrieveCallerOrganization)
  .route("/", organizationProjectsRouter)
  .route("/", organizationDomainsRouter)
  .route("/", organizationBatchExportsRouter)
  .route("/", organizationInvitesRouter)
  .route("/", organizationMembersRouter);
