import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectError } from "../support/error-bodies";
import { api, errorBody, setupOrganization } from "../support/harness";

const projectsPath = (organizationId: string) => `/api/organizations/${organizationId}/projects`;
const INVISIBLE = errorBody(
  "validation_error",
  "invalid_input",
  "Names may not contain invisible or control characters (zero-width, bidirectional or other format characters).",
  "name",
);
const taken = (name: string) =>
  errorBody(
    "conflict",
    "conflict",
    `There is already a project called "${name}" in this organization. Choose a different name.`,
  );

/** Names that look like "Café" to a reader: other case, decomposed, compatibility forms. */
const LOOKALIKES = ["CAFÉ", "Cafe\u0301", "CAFE\u0301", "café", "Ｃａｆé", "ᶜafé"];
/** Characters a name may not hold: zero-width, bidi controls, other format and control characters. */
const INVISIBLES = [
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
  "\u200e",
  "\u200f",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u061c",
  "\u00ad",
  "\u0007",
  "\n",
  "\u0085",
  "\u2028",
  "\u{e0041}",
  // Characters rendered as nothing (default-ignorable): a grapheme joiner, fillers, variation selectors.
  "\u034f",
  "\u17b4",
  "\u180b",
  "\u3164",
  "\ufe0f",
  // A joiner after an emoji but before a letter, and a tag run that spells no flag.
  "\u{1f469}\u200d",
  "\u{1f3f4}\u{e0041}",
];
const hex = (text: string) => [...text].map((character) => character.codePointAt(0)!.toString(16)).join(" ");

describe("project names that look alike", () => {
  it("are one name: creating a lookalike of a project's name answers 409, in any case, form or width", async () => {
    const { organization, key } = await setupOrganization();
    expect((await api("POST", projectsPath(organization.id), { key, body: { name: "Café" } })).status).toBe(201);
    for (const name of LOOKALIKES) {
      const response = await api("POST", projectsPath(organization.id), { key, body: { name } });
      expect({ name: hex(name), status: response.status, body: response.body }).toEqual({
        name: hex(name),
        status: 409,
        body: taken(name),
      });
    }
    expect((await api("GET", projectsPath(organization.id), { key })).body.count).toBe(2);
  });

  it("are one name on rename too, by either path; a project's own name in another form is fine", async () => {
    const { organization, project, key } = await setupOrganization();
    expect((await api("POST", projectsPath(organization.id), { key, body: { name: "Straße" } })).status).toBe(201);
    for (const path of [
      `${projectsPath(organization.id)}/${project.id}`,
      `/api/projects/${project.id}`,
      `/api/environments/${project.id}`,
    ]) {
      for (const name of ["STRASSE", "strasse", "Strasse"]) {
        expectError(await api("PATCH", path, { key, body: { name } }), 409, taken(name));
      }
    }
    expect(
      (await api("PATCH", `/api/projects/${project.id}`, { key, body: { name: "ＤＥＦＡＵＬＴ project" } })).body.name,
    ).toBe("ＤＥＦＡＵＬＴ project");
    expectError(
      await api("POST", projectsPath(organization.id), { key, body: { name: "Default Project" } }),
      409,
      taken("Default Project"),
    );
  });

  it("refuses a name holding an invisible or control character, on create and rename, and stores nothing", async () => {
    const { organization, project, key } = await setupOrganization();
    // Outside an emoji, the joiner of emoji sequences is one more invisible character.
    for (const character of INVISIBLES) {
      const name = `Caf${character}é`;
      const created = await api("POST", projectsPath(organization.id), { key, body: { name } });
      const renamed = await api("PATCH", `/api/projects/${project.id}`, { key, body: { name } });
      expect({ character: hex(character), created: created.body, renamed: renamed.body }).toEqual({
        character: hex(character),
        created: INVISIBLE,
        renamed: INVISIBLE,
      });
    }
    expect((await api("GET", projectsPath(organization.id), { key })).body).toMatchObject({
      count: 1,
      results: [{ name: "Default project" }],
    });
  });

  it("accepts names in any script, emoji and marks included", async () => {
    const { organization, key } = await setupOrganization();
    for (const name of [
      "Café",
      "東京",
      "Ελληνικά",
      "עברית",
      "العربية",
      "🚀 Launch",
      "❤️ Love",
      "İstanbul",
      "Istanbul",
      // Emoji joined by U+200D (a technologist, a family) and a flag spelt with tag characters.
      "On-call \u{1f469}\u200d\u{1f4bb}",
      "Family \u{1f468}\u200d\u{1f469}\u200d\u{1f467}",
      "Edinburgh \u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}",
    ]) {
      const response = await api("POST", projectsPath(organization.id), { key, body: { name } });
      expect({ name, status: response.status, stored: response.body.name }).toEqual({
        name,
        status: 201,
        stored: name,
      });
    }
  });
});

describe("names with nothing to see", () => {
  it("are blank: spaces, fillers and the blank braille pattern alone answer 400, and store nothing", async () => {
    const { organization, key } = await setupOrganization();
    for (const name of ["\u3164", "\u115f", "\u2800", " \u2800 "]) {
      const response = await api("POST", projectsPath(organization.id), { key, body: { name } });
      expect({ name: hex(name), status: response.status, body: response.body }).toEqual({
        name: hex(name),
        status: 400,
        body: errorBody("validation_error", "blank", "This field may not be blank.", "name"),
      });
    }
    expect((await api("GET", projectsPath(organization.id), { key })).body.count).toBe(1);
  });
});

describe("other names", () => {
  it("refuse invisible and control characters: organizations, dashboards, batch exports, API keys", async () => {
    const { organization, project, key } = await setupOrganization();
    const named = [
      ["POST", "/api/organizations", "name"],
      ["PATCH", `/api/organizations/${organization.id}`, "name"],
      ["POST", `/api/environments/${project.id}/dashboards`, "name"],
      ["POST", `/api/environments/${project.id}/batch_exports`, "name"],
      ["POST", "/api/personal_api_keys", "label"],
    ] as const;
    for (const [method, path, field] of named) {
      const response = await api(method, path, { key, body: { [field]: "Q3\u202e tropxe" } });
      expect({ path, response: response.body }).toEqual({ path, response: { ...INVISIBLE, attr: field } });
    }
  });
});

describe("keys of names stored before names were compared this way", () => {
  it("are recomputed when the name is saved again, so that a lookalike is refused from then on", async () => {
    const { organization, key } = await setupOrganization();
    const created = await api("POST", projectsPath(organization.id), { key, body: { name: "Old" } });
    // As SQLite's ASCII-only lower() stored it.
    await env.DB.prepare("update projects set name = ?, name_key = ? where id = ?")
      .bind("CAFÉ", "cafÉ", created.body.id)
      .run();

    const saved = await api("PATCH", `${projectsPath(organization.id)}/${created.body.id}`, {
      key,
      body: { name: "CAFÉ" },
    });

    expect(saved.status).toBe(200);
    expectError(await api("POST", projectsPath(organization.id), { key, body: { name: "Café" } }), 409, taken("Café"));
  });
});
