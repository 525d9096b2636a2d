import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { localServer, outputPath } from "../browser/support";

describe("the OpenAPI document", () => {
  it("passes redocly's recommended rules with no error and no warning", async () => {
    const { url } = localServer();
    const file = outputPath("openapi.json");
    writeFileSync(file, await (await fetch(`${url}/api/schema`)).text());

    const lint = spawnSync("npx", ["--no-install", "redocly", "lint", file, "--format=json"], {
      encoding: "utf8",
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    });

    const report = JSON.parse(lint.stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(lint.status).toBe(0);
  });
});
