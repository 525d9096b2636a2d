import { createRouter } from "../platform/router";
import { currentUser, updateUser, updateUserByUuid, userByUuid } from "./users.handlers";
import {
  getCurrentUser,
  getUserByUuid,
  updateCurrentUser,
  updateUserByUuid as updateUserByUuidRoute,
} from "./users.routes";

// `@me` first: the uuid routes take any other value.
export const usersRouter = createRouter()
  .openapi(getCurrentUser, currentUser)
  .openapi(updateCurrentUser, updateUser)
  .openapi(getUserByUuid, userByUuid)
  .openapi(updateUserByUuidRoute, updateUserByUuid);
