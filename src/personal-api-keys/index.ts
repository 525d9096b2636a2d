import { createRouter } from "../platform/router";
import {
  createPersonalApiKey,
  deletePersonalApiKey,
  listPersonalApiKeys,
  retrieveCallingApiKey,
  retrievePersonalApiKey,
} from "./personal-api-keys.handlers";
import { createKey, deleteKey, listKeys, retrieveCurrentKey, retrieveKey } from "./personal-api-keys.routes";

export const personalApiKeysRouter = createRouter()
  .openapi(listKeys, listPersonalApiKeys)
  .openapi(createKey, createPersonalApiKey)
  // Before `{id}`, which would take `@current` as an id.
  .openapi(retrieveCurrentKey, retrieveCallingApiKey)
  .openapi(retrieveKey, retrievePersonalApiKey)
  .openapi(deleteKey, deletePersonalApiKey);
