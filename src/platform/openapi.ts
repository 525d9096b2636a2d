import type { Router } from "./router";

/** The OpenAPI 3.1 document, generated from the same route definitions that validate requests. */
export function serveOpenApiDocument(app: Router) {
  app.openAPIRegistry.registerComponent("securitySchemes", "PersonalAPIKey", {
    type: "http",
    scheme: "bearer",
    description:
      "A personal API key (`phx_...`). Each operation lists the scope it requires; `*` grants all, `X:write` implies `X:read`.",
  });
  app.doc31("/api/schema", {
    openapi: "3.1.0",
    info: {
      title: "Organization and environment management API",
      version: "1.0.0",
      description: "PostHog-compatible management of organizations, projects and environment dashboards.",
    },
  });
}
