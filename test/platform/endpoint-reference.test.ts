import { describe, expect, it } from "vitest";
import endpointsDoc from "../../docs/endpoints.md?raw";
import { renderEndpointReference } from "../../scripts/endpoint-reference.mjs";
import { api } from "../support/harness";

describe("docs/endpoints.md", () => {
  it("is what `npm run docs:endpoints` writes from /api/schema: regenerate it when this fails", async () => {
    const response = await api("GET", "/api/schema");
    expect(response.status).toBe(200);
    const rendered = renderEndpointReference(response.body as object);
    expect(endpointsDoc === rendered, "docs/endpoints.md is stale: run `npm run docs:endpoints`").toBe(true);
  });

  it("lists every operation of the document once, under its tag", async () => {
    const document = (await api("GET", "/api/schema")).body as { paths: Record<string, Record<string, unknown>> };
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const method of Object.keys(methods)) {
        const heading = `### \`${method.toUpperCase()} ${path}\``;
        expect(
          endpointsDoc.split("\n").filter((line) => line === heading),
          heading,
        ).toHaveLength(1);
      }
    }
  });
});
