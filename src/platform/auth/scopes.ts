import type { Actor } from "../env";
import { permissionDenied } from "../errors";

const RESOURCES = [
  "access_control",
  "activity_log",
  "batch_export",
  "dashboard",
  "organization",
  "organization_member",
  "personal_api_key",
  "project",
  "sharing_configuration",
  "user",
  "webhook",
] as const;

type Resource = (typeof RESOURCES)[number];

/** A scope a route may require: a typo in a route's `scope` fails to compile. */
export type Scope = "*" | `${Resource}:read` | `${Resource}:write`;

export const SCOPES: readonly Scope[] = [
  "*",
  ...RESOURCES.flatMap((resource) => [`${resource}:read` as const, `${resource}:write` as const]),
];

/** `*` grants everything; `X:write` also grants `X:read`. */
export function scopesGrant(granted: readonly string[], required: string): boolean {
  if (granted.includes("*") || granted.includes(required)) return true;
  const [resource, action] = required.split(":");
  return action === "read" && granted.includes(`${resource}:write`);
}

export function assertScope(actor: Actor, required: string) {
  if (!scopesGrant(actor.scopes, required)) {
    throw permissionDenied(`API key missing required scope '${required}'`);
  }
}
