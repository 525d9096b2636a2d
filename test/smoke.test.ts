import { describe, expect, it } from "vitest";
import { api, setupOrganization } from "./support/harness";

describe("smoke", () => {
  it("walks the foundation", async () => {
    const { key, organization, project } = await setupOrganization();
    for (const [method, path, body] of [
      ["GET", "/api/organizations"],
      ["POST", "/api/organizations", { name: "Second" }],
      ["GET", `/api/organizations/${organization.id}/`],
      ["GET", `/api/organizations/@current/projects?limit=1`],
      ["POST", `/api/organizations/${organization.id}/projects`, {}],
      ["POST", `/api/organizations/${organization.id}/projects`, { name: "default PROJECT" }],
      ["POST", `/api/organizations/${organization.id}/projects`, { name: "x", timezone: "Mars/Base" }],
      ["GET", `/api/organizations/${organization.id}/projects/${project.id}`],
      ["GET", `/api/projects/@current`],
      ["GET", `/api/projects?limit=1`],
      ["POST", `/api/personal_api_keys`, { label: "k", scopes: ["project:read"] }],
      ["GET", `/api/personal_api_keys`],
      ["PUT", `/api/personal_api_keys`],
      ["GET", `/api/nope`],
      ["POST", `/api/organizations`, "{bad"],
      ["POST", `/api/organizations`, []],
    ] as const) {
      const response = await api(method, path, { key, body });
      console.log(method, path, response.status, response.headers.get("Allow") ?? "", JSON.stringify(response.body).slice(0, 300), JSON.stringify(response.cost));
    }
    const schema = await api("GET", "/api/schema");
    console.log(schema.status, Object.keys(schema.body.paths ?? {}));
  });
});
