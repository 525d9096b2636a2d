import { createRouter } from "../../platform/router";
import { blockOrganizationApiKey, listOrganizationApiKeys } from "./api-keys.handlers";
import { blockApiKey, listApiKeys } from "./api-keys.routes";

export const organizationApiKeysRouter = createRouter()
  .openapi(listApiKeys, listOrganizationApiKeys)
  .openapi(blockApiKey, blockOrganizationApiKey);
