import { and, eq, isNull, ne, or } from "drizzle-orm";
import { batchExports } from "../../db/schema";
import { unchangedSinceRead, type Database } from "../../platform/db";
import { settledEach } from "../../platform/background";
import { isSealed, seal, unseal, type Keyring } from "../../platform/secrets";
import { secretFields, type DestinationConfig, type DestinationType } from "./destinations";

type StoredDestination = { id: string; destinationType: string; destinationConfig: DestinationConfig };

/** Each sealed value is bound to its export and field: copied to another row or key, it does not open. */
const sealingContext = (exportId: string, field: string) => `batch_export:${exportId}:${field}`;

async function mapSecrets(
  type: DestinationType,
  config: DestinationConfig,
  transform: (value: string, field: string) => Promise<string>,
): Promise<DestinationConfig> {
  const secrets = secretFields(type).filter((field) => typeof config[field] === "string");
  const values = await Promise.all(secrets.map((field) => transform(config[field] as string, field)));
  return { ...config, ...Object.fromEntries(secrets.map((field, index) => [field, values[index]])) };
}

/** The columns that store `config` with its secrets sealed under the current key. */
export async function sealDestination(
  keyring: Keyring,
  exportId: string,
  type: DestinationType,
  config: DestinationConfig,
) {
  const destinationConfig = await mapSecrets(type, config, (value, field) =>
    seal(keyring, value, sealingContext(exportId, field)),
  );
  return { destinationConfig, sealedSecretsKeyId: keyring.current.id };
}

/** The stored configuration with its secrets in the clear; rows from before sealing hold them so already. */
export function openDestination(keyring: Keyring, row: StoredDestination): Promise<DestinationConfig> {
  return mapSecrets(row.destinationType as DestinationType, row.destinationConfig, (value, field) =>
    isSealed(value) ? unseal(keyring, value, sealingContext(row.id, field)) : Promise.resolve(value),
  );
}

/** Rows per pass: a pass stays well within a scheduled run's limits, and the next one goes on. */
const RESEAL_BATCH_SIZE = 100;

/**
 * Re-seals, under the current key, the secrets of exports written in plaintext (before secrets
 * were encrypted) or sealed with a former key. Each row is written only if it has not changed
 * since it was read. Returns how many rows were re-sealed; 0 means none is left.
 */
export async function resealBatchExportSecrets(db: Database, keyring: Keyring): Promise<number> {
  const rows = await db
    .select()
    .from(batchExports)
    .where(or(isNull(batchExports.sealedSecretsKeyId), ne(batchExports.sealedSecretsKeyId, keyring.current.id)))
    .limit(RESEAL_BATCH_SIZE);
  // Sealed first: a drizzle statement is a thenable, and awaiting one would run it alone. A secret
  // that does not open (sealed under a key no longer configured) is logged and left: the others go on.
  const sealedRows = await settledEach(
    "re-seal batch export secrets",
    rows,
    async (row) => ({
      row,
      sealed: await sealDestination(
        keyring,
        row.id,
        row.destinationType as DestinationType,
        await openDestination(keyring, row),
      ),
    }),
    (row) => ({ batch_export_id: row.id }),
  );
  const updates = sealedRows.map(({ row, sealed }) => {
    const unchanged = unchangedSinceRead([
      [batchExports.lastUpdatedAt, row.lastUpdatedAt],
      [batchExports.sealedSecretsKeyId, row.sealedSecretsKeyId],
    ]);
    return db
      .update(batchExports)
      .set(sealed)
      .where(and(eq(batchExports.id, row.id), unchanged));
  });
  const [first, ...rest] = updates;
  if (first) await db.batch([first, ...rest]);
  return rows.length;
}
