import { afterEach, describe, it } from "vitest";
import { fuzzWriteOperations } from "../support/fuzz-writes";
import { restoreTestDoubles } from "../support/people";

afterEach(restoreTestDoubles);

describe("fuzzed bodies on every write operation, under /api/organizations", () => {
  it("never answer 5xx, and a 4xx has the error body and changes nothing", { timeout: 240_000 }, () =>
    fuzzWriteOperations((operation) => operation.path.startsWith("/api/organizations/")),
  );
});
