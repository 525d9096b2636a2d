import { describe, expect, it } from "vitest";
import { omittedValue } from "../../../src/platform/activity-log/record";
import { api, setupOrganization } from "../../support/harness";

const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
/** A list setting filled to just under the 1 MiB body: 16 items of 65,000 characters. */
const fullList = (character: string) => Array.from({ length: 16 }, () => character.repeat(65_000));

describe("an entry's changes", () => {
  it("keep to 16 KiB: the largest values are replaced by their size, the others kept", async () => {
    const { key, project } = await setupOrganization();
    const path = `/api/projects/${project.id}`;
    const first = fullList("a");
    expect((await api("PATCH", path, { key, body: { person_display_name_properties: first } })).status).toBe(200);
    const second = { person_display_name_properties: fullList("b"), timezone: "Europe/Paris" };
    expect((await api("PATCH", path, { key, body: second })).status).toBe(200);

    const log = await api("GET", `/api/environments/${project.id}/activity_log?limit=1`, { key });

    const [entry] = log.body.results;
    expect(entry.activity).toBe("updated");
    const changeOf = (field: string) =>
      (entry.detail.changes as { field: string }[]).find((change) => change.field === field);
    expect(entry.detail.changes).toHaveLength(2);
    expect(changeOf("timezone")).toMatchObject({ before: "UTC", after: "Europe/Paris" });
    expect(changeOf("person_display_name_properties")).toMatchObject({
      before: omittedValue(bytesOf(first)),
      after: omittedValue(bytesOf(second.person_display_name_properties)),
    });
    expect(bytesOf(entry)).toBeLessThan(20 * 1024);
  });
});
