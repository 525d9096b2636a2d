import { createRouter } from "../platform/router";
import { currentUser, updateUser } from "./users.handlers";
import { getCurrentUser, updateCurrentUser } from "./users.routes";

export const usersRouter = createRouter().openapi(getCurrentUser, currentUser).openapi(updateCurrentUser, updateUser);
