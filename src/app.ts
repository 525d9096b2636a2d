import { environmentBatchExportsRouter, projectBatchExportsRouter } from "./environments/batch-exports";
import { organizationsRouter } from "./organizations";
import { organizationBatchExportsRouter } from "./organizations/batch-exports";
import { organizationDomainsRouter } from "./organizations/domains";
import { personalApiKeysRouter } from "./personal-api-keys";
import { onError } from "./platform/errors";
import { createNotFoundHandler } from "./platform/method-not-allowed";
import { serveOpenApiDocument } from "./platform/openapi";
import { requestContext } from "./platform/request-context";
import { createRouter } from "./platform/router";
import { projectsRouter } from "./projects";
import { usersRouter } from "./users";

export function createApp() {
  const app = createRouter();
  app.use("*", requestContext);

  app.route("/", usersRouter);
  app.route("/", organizationsRouter);
  app.route("/", organizationDomainsRouter);
  app.route("/", organizationBatchExportsRouter);
  app.route("/", environmentBatchExportsRouter);
  app.route("/", projectBatchExportsRouter);
  app.route("/", projectsRouter);
  app.route("/", personalApiKeysRouter);

  serveOpenApiDocument(app);
  app.notFound(createNotFoundHandler(() => app.routes));
  app.onError(onError);
  return app;
}
