import { createRouter } from "../platform/router";
import { organizationProjectsRouter } from "../projects";
import { organizationActivityLogRouter } from "./activity-log";
import { organizationApiKeysRouter } from "./api-keys";
import { organizationBatchExportsRouter } from "./batch-exports";
import { organizationDomainsRouter } from "./domains";
import { organizationEventsRouter } from "./events";
import { organizationInvitesRouter } from "./invites";
import { organizationMembersRouter } from "./members";
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
  replaceOrganization,
  retrieveOrganization,
  updateOrganization,
} from "./organizations.routes";
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
  .route("/", organizationApiKeysRouter)
  .route("/", organizationRolesRouter);
