import { createRouter } from "../platform/router";
import { currentUser } from "./users.handlers";
import { getCurrentUser } from "./users.routes";

export const usersRouter = createRouter().openapi(getCurrentUser, currentUser);
