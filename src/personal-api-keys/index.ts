import { createRouter } from "../platform/router";
import {
  createPersonalApiKey,
  deletePersonalApiKey,
  listPersonalApiKeys,
  retrieveCallingApiKey,
  retrievePersonalApiKey,
  rollPersonalApiKey,
  updatePersonalApiKey,
} from "./personal-api-keys.handlers";
import {
  createKey,
  deleteKey,
  listKeys,
  retrieveCurrentKey,
  retrieveKey,
  rollKey,
  updateKey,
} from "./personal-api-keys.routes";

export const personalApiKeysRouter = createRouter()
  .openapi(listKeys, listPersonalApiKeys)
  .openapi(createKey, createPersonalApiKey)
  // Before `{id}`, which would take `@current` as an id.
  .openapi(retrieveCurrentKey, retrieveCallingApiKey)
  .openapi(retrieveKey, retrievePersonalApiKey)
  .openapi(updateKey, updatePersonalApiKey)
  .openapi(rollKey, rollPersonalApiKey)
  .openapi(deleteKey, deletePersonalApiKey);
