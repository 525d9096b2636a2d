import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { describe, expect, it } from "vitest";
import { localServer, outputPath } from "../browser/support";

const CLIENTS_PAGE = new URL("../../docs/clients.md", import.meta.url);
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** The typed-client example of docs/clients.md: its only ```ts block. */
function clientsPageExample(): string {
  const blocks = [...readFileSync(CLIENTS_PAGE, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  expect(blocks).toHaveLength(1);
  return blocks[0]!;
}

const STRICT_TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "ESNext",
    moduleResolution: "Bundler",
    lib: ["ES2023", "DOM"],
    types: ["node"],
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    skipLibCheck: false,
  },
  include: ["*.ts"],
};

describe("a client generated from /api/schema", () => {
  it("compiles with strict tsc and runs the example of the clients page", async () => {
    const { url, apiKey } = localServer();
    const directory = outputPath("client");
    mkdirSync(directory, { recursive: true });
    const document = await (await fetch(`${url}/api/schema`)).json();
    writeFileSync(path.join(directory, "api-schema.d.ts"), astToString(await openapiTS(document)));
    writeFileSync(path.join(directory, "clients-page-example.ts"), clientsPageExample());
    writeFileSync(path.join(directory, "tsconfig.json"), JSON.stringify(STRICT_TSCONFIG, null, 2));

    const compile = spawnSync(process.execPath, [TSC, "-p", directory], { encoding: "utf8" });
    expect(compile.stdout).toBe("");
    expect(compile.status).toBe(0);

    const output = execFileSync(process.execPath, [path.join(directory, "clients-page-example.ts")], {
      encoding: "utf8",
      env: { ...process.env, API: url, KEY: apiKey },
    });
    expect(output).toBe("My organization: 1 member(s), first owner@example.com\n");
  });
});
