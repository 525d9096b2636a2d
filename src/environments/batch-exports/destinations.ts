import { z } from "@hono/zod-openapi";
import { validationError, validationErrorFromZod } from "../../platform/errors";

/**
 * PostHog's destination types. `AwsS3` and `S3Compatible` are what its web app creates now (a
 * bucket on AWS; another S3 storage, at an `endpoint_url`); `S3`, the type they replaced, takes
 * either and stays for the exports made with it.
 */
export const DESTINATION_TYPES = [
  "S3",
  "AwsS3",
  "S3Compatible",
  "Snowflake",
  "Postgres",
  "Redshift",
  "BigQuery",
  "HTTP",
  "NoOp",
] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
export type DestinationConfig = Record<string, unknown>;

const nonBlank = z.string().min(1);
const optionalText = z.string().nullable().optional();

/**
 * PostHog converts a text sent for a whole-number or yes/no field (`"5432"`, `"true"`), as its web
 * app's forms send them: so do we, for the texts that clearly are one; any other is still refused.
 */
const wholeNumberText = /^\s*[+-]?\d{1,15}\s*$/;
const YES_NO_TEXTS: Record<string, boolean> = { y: true, yes: true, t: true, true: true, on: true, "1": true };
for (const no of ["n", "no", "f", "false", "off", "0"]) YES_NO_TEXTS[no] = false;
const fromText = <T extends z.ZodType>(convert: (text: string) => unknown, schema: T) =>
  z.preprocess((value) => (typeof value === "string" ? (convert(value) ?? value) : value), schema);
const wholeNumber = <T extends z.ZodType>(schema: T) =>
  fromText((text) => (wholeNumberText.test(text) ? Number(text) : undefined), schema);
const yesNo = () => fromText((text) => YES_NO_TEXTS[text.trim().toLowerCase()], z.boolean()).optional();

const port = wholeNumber(z.number().int().min(1).max(65535)).optional();
/** Event names an export leaves out, or keeps alone (PostHog's inputs every destination takes). */
const eventNames = z.array(z.string().max(400)).max(1000).nullable().optional();
const eventFilters = { exclude_events: eventNames, include_events: eventNames };

/** Parsed as the URL standard parses an address, or a link on a page, with a user or password. */
const parsedWithCredentials = (text: string) =>
  [URL.parse(text), URL.parse(text, "https://page.invalid/")].some(
    (url) => url !== null && (url.username !== "" || url.password !== ""),
  );
/**
 * The authority as the exporters' URL parser (Python's `urlsplit`) reads it, and wider: after a
 * scheme and any slashes or backslashes, up to the first `/`, `?` or `#`, backslashes included.
 */
const authorityOf = (text: string) =>
  text
    .replace(/^[a-z][a-z\d+.-]*:/i, "")
    .replace(/^[/\\]+/, "")
    .split(/[/?#]/, 1)[0]!;
/**
 * Whether `value` names no user or password: those would be kept, and shown, in the clear. Read
 * both as the exporters read it (an `@` in its authority) and as the URL standard does; either
 * way, after dropping what both drop around it (controls and spaces, Unicode's too) and the tabs
 * and newlines the URL standard drops within.
 */
const withoutCredentials = (value: string | null | undefined) => {
  const text = trimControls((value ?? "").replace(/[\t\n\r]/g, "")).trim();
  return text === "" || !(authorityOf(text).includes("@") || parsedWithCredentials(text));
};

/**
 * `text` without the controls and spaces (U+0000 to U+0020) at either end, as the URL standard
 * drops them: a loop, where an end-anchored pattern would retry from every space of a long run.
 */
function trimControls(text: string) {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start += 1;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end -= 1;
  return text.slice(start, end);
}
const NO_CREDENTIALS = { error: "The URL may not carry credentials." };
/** Where an export connects: http(s), without credentials (its secrets are fields of their own). */
const endpointUrl = z
  .url({ protocol: /^https?$/, error: "Enter a valid URL." })
  .max(2000)
  .refine(withoutCredentials, NO_CREDENTIALS);

const postgresConfig = {
  ...eventFilters,
  user: nonBlank,
  password: z.string(),
  host: nonBlank,
  database: nonBlank,
  port,
  schema: z.string().optional(),
  table_name: z.string().optional(),
  has_self_signed_cert: yesNo(),
};

type Destination = { config: z.ZodObject; secrets: readonly string[]; endpoints: readonly string[] };

const s3Config = {
  ...eventFilters,
  bucket_name: nonBlank,
  region: nonBlank,
  prefix: z.string(),
  aws_access_key_id: optionalText,
  aws_secret_access_key: optionalText,
  compression: z.enum(["gzip", "brotli", "zstd", "lz4", "snappy"]).nullable().optional(),
  file_format: z.enum(["JSONLines", "Parquet"]).optional(),
  max_file_size_mb: wholeNumber(z.number().int().positive().nullable()).optional(),
  // Whether Parquet files keep their codec in their extension (PostHog's older names); stored and returned.
  legacy_parquet_extension: yesNo(),
};
const awsEncryption = {
  encryption: z.enum(["AES256", "aws:kms"]).nullable().optional(),
  kms_key_id: optionalText,
};
const s3Secrets = ["aws_access_key_id", "aws_secret_access_key"] as const;

/**
 * Each destination's configuration as PostHog's workflow inputs declare it: keys without
 * `optional()` are required on create. `secrets` are stored and never returned (PostHog's
 * `BatchExportDestination.secret_fields`). `endpoints` are the keys that say where an export
 * connects, and so where its secrets are sent.
 */
const DESTINATIONS: Record<DestinationType, Destination> = {
  S3: {
    config: z.object({
      ...s3Config,
      ...awsEncryption,
      endpoint_url: optionalText.refine(withoutCredentials, NO_CREDENTIALS),
      use_virtual_style_addressing: yesNo(),
    }),
    secrets: s3Secrets,
    endpoints: ["endpoint_url"],
  },
  // On AWS: the region says where, so no endpoint.
  AwsS3: { config: z.object({ ...s3Config, ...awsEncryption }), secrets: s3Secrets, endpoints: [] },
  S3Compatible: {
    config: z.object({
      ...s3Config,
      endpoint_url: endpointUrl,
      use_virtual_style_addressing: yesNo(),
    }),
    secrets: s3Secrets,
    endpoints: ["endpoint_url"],
  },
  Snowflake: {
    config: z.object({
      ...eventFilters,
      account: nonBlank,
      user: nonBlank,
      database: nonBlank,
      warehouse: nonBlank,
      schema: nonBlank,
      password: optionalText,
      private_key: optionalText,
      private_key_passphrase: optionalText,
      role: optionalText,
      table_name: z.string().optional(),
      authentication_type: z.enum(["password", "keypair"]).optional(),
    }),
    secrets: ["user", "password", "private_key", "private_key_passphrase"],
    endpoints: ["account"],
  },
  Postgres: { config: z.object(postgresConfig), secrets: ["user", "password"], endpoints: ["host"] },
  Redshift: {
    config: z.object({
      ...postgresConfig,
      properties_data_type: z.enum(["varchar", "super"]).optional(),
      // PostHog's COPY mode stages files in S3 with credentials of its own: not taken here.
      mode: z.enum(["INSERT"]).optional(),
      aws_access_key_id: optionalText,
      aws_secret_access_key: optionalText,
    }),
    secrets: ["user", "password", "aws_access_key_id", "aws_secret_access_key"],
    endpoints: ["host"],
  },
  BigQuery: {
    config: z.object({
      ...eventFilters,
      project_id: nonBlank,
      dataset_id: nonBlank,
      private_key: nonBlank,
      private_key_id: nonBlank,
      token_uri: nonBlank,
      client_email: nonBlank,
      table_id: z.string().optional(),
      use_json_type: yesNo(),
    }),
    secrets: ["private_key", "private_key_id", "client_email", "token_uri"],
    endpoints: ["token_uri"],
  },
  HTTP: {
    config: z.object({
      ...eventFilters,
      url: endpointUrl,
      token: nonBlank,
    }),
    secrets: ["token"],
    endpoints: ["url"],
  },
  NoOp: { config: z.object(eventFilters), secrets: [], endpoints: [] },
};

/** For the OpenAPI document: what each destination type requires. */
export const REQUIRED_CONFIG_KEYS = Object.fromEntries(
  DESTINATION_TYPES.map((type) => {
    const shape = DESTINATIONS[type].config.shape;
    return [type, Object.keys(shape).filter((key) => !shape[key]!.safeParse(undefined).success)];
  }),
);

/**
 * The configuration a destination of `type` will run with, or a 400 naming the key as
 * `destination.config.<key>`: an unknown key, a missing required key, a value of the wrong type.
 */
export function parseDestinationConfig(type: DestinationType, config: DestinationConfig): DestinationConfig {
  const schema = DESTINATIONS[type].config;
  const unknownKeys = Object.keys(config)
    .filter((key) => !Object.hasOwn(schema.shape, key))
    .sort();
  if (unknownKeys.length > 0) {
    throw validationError(
      "invalid_input",
      `Configuration has unknown field/s: ${unknownKeys.map((key) => `'${key}'`).join(", ")}.`,
      `destination.config.${unknownKeys[0]}`,
    );
  }
  const result = schema.safeParse(config);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ ...issue, path: ["destination", "config", ...issue.path] }));
  throw validationErrorFromZod(issues, { destination: { config } });
}

/**
 * The stored configuration a PATCH of the same type merges into. When the PATCH moves an endpoint,
 * each stored secret must be sent again (400 naming the first that is not): a caller who never saw
 * them must not redirect them to a host of their choosing.
 */
export function configKeptFor(type: DestinationType, stored: DestinationConfig, sent: DestinationConfig) {
  const { secrets, endpoints } = DESTINATIONS[type];
  // An endpoint that is itself a secret (BigQuery's `token_uri`) moves whenever it is sent:
  // compared, it would confirm a guess of it.
  const moved = endpoints.find(
    (field) => field in sent && (secrets.includes(field) || (sent[field] ?? null) !== (stored[field] ?? null)),
  );
  if (moved === undefined) return stored;
  const unsent = secrets.find((field) => typeof stored[field] === "string" && !(field in sent));
  if (unsent !== undefined) {
    throw validationError(
      "invalid_input",
      `Changing ${moved} needs ${unsent} sent again: stored secrets only go where they were set for.`,
      `destination.config.${unsent}`,
    );
  }
  return stored;
}

/** The configuration keys of `type` that hold secrets: sealed in the database, never returned. */
export const secretFields = (type: DestinationType) => DESTINATIONS[type].secrets;

/** The configuration as responses show it: secrets stay in the database. */
export function publicConfig(type: DestinationType, config: DestinationConfig): DestinationConfig {
  const secrets = DESTINATIONS[type].secrets;
  return Object.fromEntries(Object.entries(config).filter(([key]) => !secrets.includes(key)));
}
