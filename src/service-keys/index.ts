import { createRouter } from "../platform/router";
import {
  createOrganizationServiceKey,
  deleteOrganizationServiceKey,
  listOrganizationServiceKeys,
  retrieveCallingServiceKey,
  retrieveOrganizationServiceKey,
  rollOrganizationServiceKey,
  updateOrganizationServiceKey,
} from "./service-keys.handlers";
import {
  createServiceKey,
  deleteServiceKey,
  listServiceKeys,
  retrieveCurrentServiceKey,
  retrieveServiceKey,
  rollServiceKey,
  updateServiceKey,
} from "./service-keys.routes";

export const serviceKeysRouter = createRouter()
  .openapi(retrieveCurrentServiceKey, retrieveCallingServiceKey)
  .openapi(listServiceKeys, listOrganizationServiceKeys)
  .openapi(createServiceKey, createOrganizationServiceKey)
  .openapi(retrieveServiceKey, retrieveOrganizationServiceKey)
  .openapi(updateServiceKey, updateOrganizationServiceKey)
  .openapi(rollServiceKey, rollOrganizationServiceKey)
  .openapi(deleteServiceKey, deleteOrganizationServiceKey);
