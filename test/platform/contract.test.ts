import { describe, expect, it } from "vitest";
import { contractBreach } from "../support/contract";
import { api, setupOrganization } from "../support/harness";

// `api()` holds every JSON answer of the suite to /api/schema (test/support/contract.ts): this
// file shows that the check refuses what a generated client would not decode.
describe("the contract check of every answer", () => {
  it("passes a real answer, and names each way an answer can differ from its declaration", async () => {
    const { key } = await setupOrganization();
    const me = (await api("GET", "/api/users/@me/", { key })).body;
    expect(contractBreach("GET", "/api/users/@me/", 200, me)).toBeUndefined();

    expect(contractBreach("GET", "/api/users/@me/", 200, { ...me, is_staff: "false" })).toBe(
      'GET /api/users/@me 200: /is_staff must be boolean, not "false"',
    );
    const { email: _email, ...withoutEmail } = me;
    expect(contractBreach("GET", "/api/users/@me", 200, withoutEmail)).toBe(
      "GET /api/users/@me 200: / must have required property 'email', not " + JSON.stringify(withoutEmail),
    );
    expect(contractBreach("GET", "/api/users/@me/", 200, { ...me, secret: 1 })).toBe(
      "GET /api/users/@me 200: / has secret, undeclared",
    );
    expect(contractBreach("GET", "/api/users/@me/", 200, { ...me, date_joined: "yesterday" })).toBe(
      'GET /api/users/@me 200: /date_joined must match format "date-time", not "yesterday"',
    );
    expect(contractBreach("GET", "/api/users/@me/", 418, me)).toBe("GET /api/users/@me 418: status not declared");
    expect(contractBreach("POST", "/api/users/@me/", 200, me)).toBe("POST /api/users/@me/: not in the document");
    // A method or endpoint that does not exist: its refusal is what is tested.
    expect(contractBreach("POST", "/api/users/@me/", 405, {})).toBeUndefined();
    expect(contractBreach("GET", "/api/nothing/", 404, {})).toBeUndefined();
  });
});
