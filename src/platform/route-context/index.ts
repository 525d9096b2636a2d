import { z } from "@hono/zod-openapi";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Database, ReadBatch } from "../db";
import type { AppEnv, OrganizationContext } from "../env";
import { insufficientLevel, notFound } from "../errors";
import { assertKeyPolicyAllows } from "../auth/key-policy";
import { assertOrganizationInKeyScope } from "../auth/key-scoping";
import { integerOrCurrentPathId } from "../path-ids";
import { guessCurrentEnvironment, rememberCurrentEnvironment } from "./current-environment-guess";
import {
  admitMember,
  CURRENT,
  organizationRef,
  requestedOrganization,
  selectMembership,
  type OrganizationRef,
} from "./organization";
import { parseProjectId, selectCurrentEnvironment, selectProject, type SelectedProject } from "./project";

/**
 * The organization or project a request is about. A route declares it in `apiRoute`
 * (`context`, with the `level` it needs and, for a write, the `reads` of what its path names),
 * and this module alone resolves it: the path's id, `@current`, the key's scoping, the caller's
 * membership, the members' keys setting and the level, always in the round trip of the route's
 * own first reads.
 */
export type ContextKind = "organization" | "project";

export const OrganizationParams = z.object({
  organization_id: z.string().openapi({ description: "Organization id, or `@current`." }),
});

export const ProjectParams = z.object({
  project_id: integerOrCurrentPathId("Environment (project) id, or `@current`."),
});

type Statement = BatchItem<"sqlite">;
/** What a read sends with the project: none, for a write whose body names nothing to read. */
type Statements = [] | [Statement, ...Statement[]];

/** What a write reads with its context before its body is read; the handler takes the results. */
export type RouteReads<R> = {
  load(c: Context<AppEnv>): Promise<void>;
  results(c: Context<AppEnv>): R;
};

/**
 * The reads of a write (the row its path names, what its body names: `peekJsonBody`), made through
 * `organizationRead` or `projectRead` so that they resolve the context in their round trip and the
 * write is the second and last.
 */
export function routeReads<R>(read: (c: Context<AppEnv>) => Promise<R>): RouteReads<R> {
  const loaded = new WeakMap<Context<AppEnv>, R>();
  return {
    async load(c) {
      loaded.set(c, await read(c));
    },
    results(c) {
      if (!loaded.has(c)) throw new Error("the route does not declare these reads");
      return loaded.get(c) as R;
    },
  };
}

/**
 * `apiRoute`'s check of a route's context. The path's id is checked before any query (404 for a
 * project id that is not a number, 403 outside the key's scope). A write resolves the context
 * before its body is read, with its `reads`; a GET's handler resolves it in the round trip of its
 * data (`organizationRead`, `projectRead`). Reads that did not resolve it, or a successful answer
 * that never did, are refused as an error: no route declaring a context answers without the
 * membership check.
 */
export function requireContext(
  kind: ContextKind,
  minimumLevel: number | undefined,
  resolveFirst: boolean,
  reads: RouteReads<unknown> | undefined,
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const assertResolved = () => {
      if (c.get(kind) === undefined) throw new Error(`a ${kind} route went on without resolving the caller's ${kind}`);
    };
    c.set("minimumLevel", minimumLevel);
    if (kind === "organization") requestedOrganization(c.req.param("organization_id"), c.var.actor);
    else requestedEnvironment(c);
    if (reads) {
      await reads.load(c);
      assertResolved();
    } else if (resolveFirst) await resolveAlone(c, kind);
    await next();
    if (c.res.ok) assertResolved();
  });
}

function assertMinimumLevel(c: Context<AppEnv>, level: number) {
  const minimum = c.get("minimumLevel");
  if (minimum !== undefined && level < minimum) throw insufficientLevel();
}

function admitOrganization(c: Context<AppEnv>, membership: OrganizationContext | undefined) {
  const organization = admitMember(c.var.actor, membership);
  assertMinimumLevel(c, organization.level);
  c.set("organization", organization);
}

function admitProject(c: Context<AppEnv>, selected: SelectedProject | undefined) {
  if (!selected) throw notFound();
  assertOrganizationInKeyScope(c.var.actor, selected.organizationId);
  const { membersCanUsePersonalApiKeys, personalApiKeyMaxScopes, keyBlocked, ...project } = selected;
  assertKeyPolicyAllows(c.var.actor, {
    membersCanUsePersonalApiKeys,
    personalApiKeyMaxScopes,
    keyBlocked,
    organizationLevel: project.organizationLevel,
  });
  assertMinimumLevel(c, project.level);
  c.set("project", project);
}

/** The path's environment id, undefined for `@current`. */
function requestedEnvironment(c: Context<AppEnv>): number | undefined {
  const requested = c.req.param("project_id");
  if (requested === undefined) throw new Error("a project route needs :project_id");
  return requested === CURRENT ? undefined : parseProjectId(c.var.actor, requested);
}

/** A write that reads nothing first: the context alone, in one query (`@current` included). */
async function resolveAlone(c: Context<AppEnv>, kind: ContextKind) {
  const { db, actor } = c.var;
  if (kind === "organization") {
    const requested = requestedOrganization(c.req.param("organization_id"), actor);
    const [membership] = await selectMembership(db, actor, requested);
    return admitOrganization(c, membership);
  }
  const environmentId = requestedEnvironment(c);
  const [selected] = await selectProject(db, actor, environmentId);
  admitProject(c, selected);
  if (environmentId === undefined) rememberCurrentEnvironment(c, c.var.project.environmentId);
}

/** Reads batched with the caller's membership of the path's organization. */
export type OrganizationRead = {
  db: Database;
  /** The path's organization id, or `@current`: what a prepared statement takes. */
  requested: string;
  organizationId: OrganizationRef;
  /**
   * Runs the statements with the caller's membership and admits it (404, 403) before any result
   * is returned. The statements run before access is known: they must only read.
   */
  batch: ReadBatch;
};

/** `db`: another session of the database than the request's (the primary, say). */
export function organizationRead(c: Context<AppEnv>, db: Database = c.var.db): OrganizationRead {
  const { actor } = c.var;
  const requested = requestedOrganization(c.req.param("organization_id"), actor);
  return {
    db,
    requested,
    organizationId: organizationRef(db, actor, requested),
    async batch<T extends [Statement, ...Statement[]]>(statements: T) {
      const [memberships, ...results] = await db.batch([selectMembership(db, actor, requested), ...statements]);
      admitOrganization(c, (memberships as OrganizationContext[])[0]);
      return results as BatchResponse<T>;
    },
  };
}

/**
 * Runs the statements `build` makes for the path's environment with the project and the caller's
 * rights, and admits them (404, 403) before any result is returned. The statements run before
 * access is known: they must only read. For `@current`, `build` may be called twice: the round
 * trip reads the environment last picked (`guessCurrentEnvironment`) with the one `@current`
 * picks now, and is made again when they differ.
 */
export async function projectRead<T extends Statements>(
  c: Context<AppEnv>,
  build: (environmentId: number) => T,
): Promise<BatchResponse<T>> {
  const { db, actor } = c.var;

  async function readEnvironment(environmentId: number) {
    const [rows, ...results] = await db.batch([selectProject(db, actor, environmentId), ...build(environmentId)]);
    admitProject(c, (rows as SelectedProject[])[0]);
    return results as BatchResponse<T>;
  }

  const named = requestedEnvironment(c);
  if (named !== undefined) return readEnvironment(named);
  const guess = await guessCurrentEnvironment(c);
  let current: number | null | undefined;
  if (guess === undefined) {
    [{ id: current } = { id: null }] = await selectCurrentEnvironment(db, actor);
  } else {
    const [picked, rows, ...results] = await db.batch([
      selectCurrentEnvironment(db, actor),
      selectProject(db, actor, guess),
      ...build(guess),
    ]);
    current = picked[0]?.id;
    if (current === guess) {
      admitProject(c, (rows as SelectedProject[])[0]);
      return results as BatchResponse<T>;
    }
    // The guess read an environment the caller may no longer see: its rows are not theirs to count.
    c.var.meter.readBeyondCaller = true;
  }
  if (current === null || current === undefined) throw notFound();
  rememberCurrentEnvironment(c, current);
  return readEnvironment(current);
}
