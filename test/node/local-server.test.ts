import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localVars } from "../../scripts/local-server.mjs";

let directory: string;
beforeEach(() => {
  directory = mkdtempSync(path.join(tmpdir(), "local-vars-"));
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

describe("the local server's vars (tests, docs:check, benchmarks)", () => {
  it("go to wrangler dev in an owner-only file, so that no secret is on a command line any user can read", () => {
    const args = localVars(directory, { EMAIL_TRANSPORT_URL: 'http://127.0.0.1:1/send?a="b"' });

    const file = path.join(directory, "local.env");
    expect(args).toEqual(["--env-file", file]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/^SECRETS_ENCRYPTION_KEY="[A-Za-z0-9+/]{43}="$/),
      'WEBHOOKS_ALLOW_INSECURE="1"',
      'EXPOSE_D1_COST="1"',
      'EMAIL_TRANSPORT_URL="http://127.0.0.1:1/send?a=\\"b\\""',
    ]);
  });
});
