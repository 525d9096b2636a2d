import { createRouter } from "../platform/router";
import {
  createPersonalApiKey,
  deletePersonalApiKey,
  listPersonalApiKeys,
  retrievePersonalApiKey,
} from "./personal-api-keys.handlers";
import { createKey, deleteKey, listKeys, retrieveKey } from "./personal-api-keys.routes";

export const personalApiKeysRouter = createRouter()
  .openapi(listKeys, listPersonalApiKeys)
  .openapi(createKey, createPersonalApiKey)
  .openapi(retrieveKey, retrievePersonalApiKey)
  .openapi(deleteKey, deletePersonalApiKey);
