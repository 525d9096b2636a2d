import { describe, expect, it } from "vitest";
import eventsDoc from "../../../docs/events.md?raw";
import { ActivityEvent } from "../../../src/platform/activity-log/activity-log.schema";
import { EVENT_EXAMPLES, type EventName } from "../../../src/platform/activity-log/event-examples";
import { examplePayload, renderEventsDoc } from "../../../src/platform/activity-log/events-doc";
import { ACTIVITY_EVENTS } from "../../../src/platform/activity-log/vocabulary";

describe("docs/events.md", () => {
  it("is what `npm run docs:events` writes from the vocabulary: regenerate it when this fails", () => {
    expect(eventsDoc === renderEventsDoc(), "docs/events.md is stale: run `npm run docs:events`").toBe(true);
  });

  it("shows every event of the vocabulary once, each example a payload as deliveries send it", () => {
    expect(Object.keys(EVENT_EXAMPLES).sort()).toEqual([...ACTIVITY_EVENTS].sort());
    for (const event of ACTIVITY_EVENTS as EventName[]) {
      expect(
        eventsDoc.split("\n").filter((line) => line === `### ${event}`),
        event,
      ).toHaveLength(1);
      const payload = examplePayload(event);
      expect(ActivityEvent.parse(payload), event).toEqual(payload);
      expect(payload).toMatchObject({ type: event, scope: event.split(".")[0], activity: event.split(".")[1] });
    }
  });
});
