import { timing } from "hono/timing";
import { environmentsRouter } from "./environments";
import { sealAppendedActivity } from "./platform/activity-log/after-response";
import { organizationsRouter } from "./organizations";
import { personalApiKeysRouter } from "./personal-api-keys";
import { serviceKeysRouter } from "./service-keys";
import { corsFromEnvironment } from "./platform/cors";
import { onError } from "./platform/errors";
import { healthRouter } from "./platform/health";
import { answerMethodNotAllowed, endpointNotFound } from "./platform/method-not-allowed";
import { serveOpenApiDocument } from "./openapi";
import { requestContext } from "./platform/request-context";
import { responseHeaders } from "./platform/response-headers";
import { requestLog, requestLogScope } from "./platform/request-log";
import { createRouter } from "./platform/router";
import { projectsRouter } from "./projects";
import { sharedRouter } from "./public-dashboards";
import { signupRouter } from "./signup";
import { usersRouter } from "./users";

/** Where people look for an API's documentation; /docs itself is a static asset. */
const DOCUMENTATION_ALIASES = [
  "/",
  "/api",
  "/api/docs",
  "/swagger",
  "/redoc",
  "/reference",
  "/api/schema/swagger-ui",
  "/api/schema/redoc",
];

export function createApp() {
  const app = createRouter();
  app.use(
    "*",
    ...responseHeaders,
    requestLogScope,
    timing({ total: false, enabled: (c) => c.get("meter") !== undefined }),
    requestLog,
    // Before CORS, so that a preflight it answers reports its cost (none) too.
    requestContext,
    corsFromEnvironment,
    sealAppendedActivity,
  );
  app.use("*", answerMethodNotAllowed(app));

  app.route("/", healthRouter);
  app.route("/", usersRouter);
  app.route("/", organizationsRouter);
  app.route("/", environmentsRouter);
  app.route("/", projectsRouter);
  app.route("/", personalApiKeysRouter);
  app.route("/", serviceKeysRouter);
  app.route("/", signupRouter);
  app.route("/", sharedRouter);
  for (const alias of DOCUMENTATION_ALIASES) app.get(alias, (c) => c.redirect("/docs/", 302));

  serveOpenApiDocument(app);
  app.notFound(endpointNotFound);
  app.onError(onError);
  return app;
}
