import { environmentsRouter } from "./environments";
import { organizationsRouter } from "./organizations";
import { personalApiKeysRouter } from "./personal-api-keys";
import { onError } from "./platform/errors";
import { createNotFoundHandler } from "./platform/method-not-allowed";
import { serveOpenApiDocument } from "./platform/openapi";
import { requestContext } from "./platform/request-context";
import { responseHeaders } from "./platform/response-headers";
import { createRouter } from "./platform/router";
import { projectsRouter } from "./projects";
import { sharedRouter } from "./shared";
import { signupRouter } from "./signup";
import { usersRouter } from "./users";

export function createApp() {
  const app = createRouter();
  app.use("*", ...responseHeaders, requestContext);

  app.route("/", usersRouter);
  app.route("/", organizationsRouter);
  app.route("/", environmentsRouter);
  app.route("/", projectsRouter);
  app.route("/", personalApiKeysRouter);
  app.route("/", signupRouter);
  app.route("/", sharedRouter);

  serveOpenApiDocument(app);
  app.notFound(createNotFoundHandler(() => app.routes));
  app.onError(onError);
  return app;
}
