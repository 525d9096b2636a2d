import {
  ActivityLogEntry,
  ActivityLogPage,
  ActivityLogQuery,
  ChainVerdict,
  EntryIdParam,
} from "../../platform/activity-log/activity-log.schema";
import { MembershipLevel } from "../../platform/levels";
import { OrganizationParams } from "../../platform/route-context";
import { apiRoute, jsonResponse as json } from "../../platform/route";

// The organization-wide log is for admins and owners, as in PostHog.

export const listActivityLog = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/activity_log",
  scope: "activity_log:read",
  serviceKeys: true,
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["activity log"],
  summary: "Who changed what in the organization, newest first (cursor or numbered pages)",
  request: { params: OrganizationParams, query: ActivityLogQuery },
  responses: { 200: json(ActivityLogPage, "A page of entries") },
});

export const verifyActivityLog = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/activity_log/verify",
  scope: "activity_log:read",
  serviceKeys: true,
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["activity log"],
  summary: "Recompute the organization's hash chain: is every entry present and unaltered?",
  description:
    "Reads every entry kept (since the retention anchor), so its cost grows with the log; " +
    "run it as an audit, not on every request.",
  request: { params: OrganizationParams },
  responses: { 200: json(ChainVerdict, "The verdict") },
});

export const retrieveActivityLogEntry = apiRoute({
  method: "get",
  path: "/api/organizations/{organization_id}/activity_log/{id}",
  scope: "activity_log:read",
  serviceKeys: true,
  context: "organization",
  level: MembershipLevel.admin,
  tags: ["activity log"],
  summary: "One entry of the organization's log, by its id: a stable URL for it",
  request: { params: OrganizationParams.merge(EntryIdParam) },
  responses: { 200: json(ActivityLogEntry, "The entry") },
});
