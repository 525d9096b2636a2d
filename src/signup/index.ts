import { createRouter } from "../platform/router";
import { previewSignup, signUpWithInvite, signUpWithInviteInBody } from "./signup.handlers";
import { acceptInvite, acceptInviteByBody, previewInvite } from "./signup.routes";

export const signupRouter = createRouter()
  .openapi(acceptInviteByBody, signUpWithInviteInBody)
  .openapi(previewInvite, previewSignup)
  .openapi(acceptInvite, signUpWithInvite);
