import { limitedAs } from "../platform/auth/refused-keys";
import { IsolateMemory } from "../platform/isolate-memory";

/** How often one address's views of one link count: at most once in this period. */
const VIEW_COUNT_PERIOD_MS = 60_000;

const countedViews = new IsolateMemory<string, true>(10_000);

/**
 * Whether this view of a link is counted (a write of its view count): from each address (an IPv6
 * one by its /64, as the limits count it), and each allow-listed viewer there, once a minute at
 * the most, in each isolate, so that an anonymous visitor reloading without end does not make the
 * database write without end. A caller with no address (inside the runtime) is always counted.
 */
export function countsAsView(address: string | undefined, dashboardId: number, viewer: string | null): boolean {
  if (address === undefined) return true;
  const now = Date.now();
  const key = `${dashboardId} ${limitedAs(address)} ${viewer ?? ""}`;
  if (countedViews.get(key, now) !== undefined) return false;
  countedViews.set(key, true, now + VIEW_COUNT_PERIOD_MS);
  return true;
}
