import { D1_MAX_BOUND_PARAMETERS, numberParameters, type Database } from "./db";
import type { Actor } from "./env";

/** Shapes kept per prepared builder and isolate. */
const SHAPES_KEPT_AT_MOST = 256;

/**
 * Statements whose SQL is built once per isolate and shape, then bound per request.
 *
 * Building a statement with drizzle costs more Worker CPU than anything else a read does (about a
 * quarter of `@me`'s), and the text comes out the same for every request of the same shape. So
 * `prepared(build)` returns a function of `build`'s own signature whose statements are built once
 * for each shape of its arguments and afterwards only bound: the request's values replace the
 * sentinels they were built with, and drizzle's own mapping turns rows into the same results.
 * Parameters are numbered (`?1`): a value the statement reads many times is bound once.
 *
 * What is a shape and what is a value: the actor's `kind`, `scopes` and `requestScopes`, whether a
 * key scope list is empty, `undefined`, `null`, booleans and the string `@current` are the shape;
 * every other number and string (the actor's ids, a scope list as the JSON `inJsonList` binds) is
 * a value. A builder wrapped here may use values only as bound SQL values (a list whole, never its
 * items or its length), and must take anything else it reads (the time, say) as an argument. Each
 * shape is built twice, with two sentinel sets: a value that changed the SQL text, or that reached
 * a bound parameter in another form than its own, is refused on the spot, so those misuses fail
 * the first request of that shape, in tests too. A builder that branches on a value (compares it,
 * clamps it, tests it for zero) may pass that check with the sentinels, which are negative numbers
 * and strings no client sends: keep such decisions out of wrapped builders.
 */
export function prepared<A extends unknown[], R extends Built>(
  build: (db: Database, ...args: A) => R,
): (db: Database, ...args: A) => R {
  const shapes = new Map<string, PreparedShape>();
  return (db, ...args) => {
    const { shape, values } = describe(args);
    let found = shapes.get(shape);
    if (!found) {
      found = prepareShape((replaced) => build(db, ...(replaced as A)), args, values);
      // Keys' scope lists are part of the shape, and keys choose them: the memory stays bounded.
      if (shapes.size >= SHAPES_KEPT_AT_MOST) shapes.clear();
      shapes.set(shape, found);
    }
    const statements = found.statements.map((statement) => boundStatement(db, statement, values));
    return (found.single ? statements[0] : statements) as unknown as R;
  };
}

/** A statement drizzle can prepare: a select, insert, update or delete builder. */
type Preparable = { prepare(): DrizzlePrepared; toSQL(): { sql: string; params: unknown[] } };
type Built = Preparable | readonly Preparable[];

/** What drizzle's batch and result mapping read of a prepared query (its `_prepare()` result). */
type DrizzlePrepared = {
  getQuery(): { sql: string; params: unknown[] };
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
};

/** A parameter of the built SQL: the request's value number `value`, or a constant of the shape. */
type Parameter = { value: number } | { constant: unknown };

type PreparedStatement = { sql: string; parameters: Parameter[]; mapping: DrizzlePrepared };
type PreparedShape = { single: boolean; statements: PreparedStatement[] };

/** A value of the arguments, in the order `describe` finds them; a list binds as its JSON (`inJsonList`). */
type Value = string | number | unknown[];

const ACTOR_SHAPE_FIELDS: readonly string[] = ["kind", "scopes", "requestScopes"];

const isShape = (arg: unknown) =>
  arg === undefined ||
  arg === null ||
  typeof arg === "boolean" ||
  arg === "@current" ||
  (Array.isArray(arg) && arg.length === 0);

const isActor = (arg: unknown): arg is Actor => typeof arg === "object" && arg !== null && "keyId" in arg;

/**
 * Walks the arguments as `describe` and `prepareShape` both do: each value is handed to `value`,
 * which returns what stands in its place; everything else is kept.
 */
function walk(args: unknown[], value: (leaf: Value) => unknown): unknown[] {
  const visit = (arg: unknown): unknown => {
    if (isShape(arg)) return arg;
    if (typeof arg === "number" || typeof arg === "string" || Array.isArray(arg)) return value(arg);
    if (isActor(arg)) {
      return Object.fromEntries(
        Object.entries(arg).map(([key, field]) => [key, ACTOR_SHAPE_FIELDS.includes(key) ? field : visit(field)]),
      );
    }
    throw new Error(`prepared statements take numbers, strings, lists and the actor, not ${typeof arg}`);
  };
  return args.map(visit);
}

/** The arguments' shape as a string (each value's place marked by its type), and their values in order. */
function describe(args: unknown[]): { shape: string; values: Value[] } {
  const values: Value[] = [];
  const shape = JSON.stringify(
    walk(args, (leaf) => {
      values.push(leaf);
      return Array.isArray(leaf) ? `list of ${typeof leaf[0]}` : typeof leaf;
    }),
    // JSON writes an undefined item as null: kept apart, they are two shapes.
    (_key, item: unknown) => (item === undefined ? "\u0000undefined" : item),
  );
  return { shape, values };
}

/**
 * Sentinels for `values`, of set 1 or 2, each of its value's type: numbers no id takes, strings no
 * client sends, lists of one such. `forms` maps what each binds as (a list as its JSON) to its index.
 */
function sentinelsFor(values: Value[], set: 1 | 2) {
  const forms = new Map<unknown, number>();
  const stand = values.map((value, index) => {
    const number = -(set * 1_000_000_000 + index);
    const scalar = (of: unknown) => (typeof of === "number" ? number : `\u0000sentinel ${set}:${index}`);
    // A list's sets differ in length too, so that a builder binding its length is caught.
    const sentinel = Array.isArray(value) ? Array.from({ length: set }, () => scalar(value[0])) : scalar(value);
    forms.set(Array.isArray(sentinel) ? JSON.stringify(sentinel) : sentinel, index);
    return sentinel;
  });
  return { stand, forms };
}

function prepareShape(build: (args: unknown[]) => Built, args: unknown[], values: Value[]): PreparedShape {
  const first = sentinelsFor(values, 1);
  const second = sentinelsFor(values, 2);
  const replaced = (set: { stand: unknown[] }) => {
    let next = 0;
    return walk(args, () => set.stand[next++]);
  };
  const builtFirst = build(replaced(first));
  const builtSecond = build(replaced(second));
  const single = !Array.isArray(builtFirst);
  const list = (built: Built) => (Array.isArray(built) ? built : [built]) as readonly Preparable[];
  const others = list(builtSecond);
  const otherSQL = (index: number) => {
    const other = others[index];
    if (!other) throw new Error("a prepared builder returned a different number of statements");
    return other.toSQL();
  };
  return {
    single,
    statements: list(builtFirst).map((statement, index) => {
      const mapping = statement.prepare();
      const { sql, params } = mapping.getQuery();
      const other = otherSQL(index);
      if (other.sql !== sql)
        throw new Error(`a prepared statement's SQL depends on a value: ${whereApart(sql, other.sql)}`);
      const parameters = params.map((param, at): Parameter => {
        const value = first.forms.get(param);
        if (value !== undefined && second.forms.get(other.params[at]) === value) return { value };
        if (value !== undefined || param !== other.params[at]) {
          throw new Error(`a prepared statement binds a value in another form than its own: ${sql}`);
        }
        return { constant: param };
      });
      return { ...numbered(sql, parameters), mapping };
    }),
  };
}

/** The statement with its parameters numbered (`numberParameters`), each value and each distinct constant once. */
function numbered(sql: string, parameters: Parameter[]): { sql: string; parameters: Parameter[] } {
  const result = numberParameters(sql, parameters, (parameter) =>
    "value" in parameter
      ? `value ${parameter.value}`
      : `constant ${typeof parameter.constant} ${JSON.stringify(parameter.constant)}`,
  );
  if (result.parameters.length > D1_MAX_BOUND_PARAMETERS) {
    throw new Error(
      `a prepared statement binds ${result.parameters.length} parameters, D1 at most ${D1_MAX_BOUND_PARAMETERS}`,
    );
  }
  return result;
}

/** Where two texts part, as a few characters of each: what a misuse error points at. */
function whereApart(first: string, second: string) {
  let at = 0;
  while (at < first.length && first[at] === second[at]) at += 1;
  const around = (text: string) => text.slice(Math.max(0, at - 60), at + 40);
  return `…${around(first)}… / …${around(second)}…`;
}

/**
 * The statement bound to the request's values, as a batch item drizzle's `db.batch` takes (it
 * calls `_prepare()`, binds `stmt` to `getQuery().params` and maps with `mapResult`), and as a
 * query that can be awaited alone.
 */
function boundStatement(db: Database, { sql, parameters, mapping }: PreparedStatement, values: Value[]) {
  const params = parameters.map((parameter) => {
    if ("constant" in parameter) return parameter.constant;
    const value = values[parameter.value];
    return Array.isArray(value) ? JSON.stringify(value) : value;
  });
  const stmt = db.$client.prepare(sql);
  const prepared = {
    getQuery: () => ({ sql, params }),
    stmt,
    mapResult: (response: unknown, isFromBatch?: boolean) => mapping.mapResult(response, isFromBatch),
  };
  return {
    _prepare: () => prepared,
    then<T>(onFulfilled: (rows: unknown) => T, onRejected?: (error: unknown) => T) {
      return stmt
        .bind(...params)
        .all()
        .then((response: D1Result) => mapping.mapResult(response, true))
        .then(onFulfilled, onRejected);
    },
  };
}
