import { createRouter } from "../platform/router";
import { previewSignup, signUpWithInvite } from "./signup.handlers";
import { acceptInvite, previewInvite } from "./signup.routes";

export const signupRouter = createRouter()
  .openapi(previewInvite, previewSignup)
  .openapi(acceptInvite, signUpWithInvite);
