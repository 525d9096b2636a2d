import { createRouter } from "../platform/router";
import {
  createCallerOrganization,
  deleteCallerOrganization,
  listCallerOrganizations,
  retrieveCallerOrganization,
  updateCallerOrganization,
} from "./organizations.handlers";
import {
  createOrganization,
  deleteOrganization,
  listOrganizations,
  retrieveOrganization,
  replaceOrganization,
  updateOrganization,
} from "./organizations.routes";
import { organizationActivityLogRouter } from "./activity-log";
import { organizationBatchExportsRouter } from "./batch-exports";
import { organizationDomainsRouter } from "./domains";
import { organizationEventsRouter } from "./events";
import { organizationInvitesRouter } from "./invites";
import { organizationMembersRouter } from "./members";
import { organizationProjectsRouter } from "./projects";
import { organizationRolesRouter } from "./roles";
import { organizationWebhooksRouter } from "./webhooks";

export const organizationsRouter = createRouter()
  .openapi(listOrganizations, listCallerOrganizations)
  .openapi(createOrganization, createCallerOrganization)
  .openapi(retrieveOrganization, retrieveCallerOrganization)
  .openapi(updateOrganization, updateCallerOrganization)
  .openapi(replaceOrganization, updateCallerOrganization)
  .openapi(deleteOrganization, deleteCallerOrganization)
  .route("/", organizationProjectsRouter)
  .route("/", organizationDomainsRouter)
  .route("/", organizationBatchExportsRouter)
  .route("/", organizationInvitesRouter)
  .route("/", organizationMembersRouter)
  .route("/", organizationActivityLogRouter)
  .route("/", organizationEventsRouter)
  .route("/", organizationWebhooksRouter)
  .route("/", organizationRolesRouter);
