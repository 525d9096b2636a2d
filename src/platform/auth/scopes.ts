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

export const SCOPES: readonly string[] = ["*", ...RESOURCES.flatMap((resource) => [`${resource}:read`, `${resource}:write`])];

export type Scope = (typeof SCOPES)[number];

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
