/**
 * Custom search attributes on an existing Temporal server (operator service). The worker registers its own at start
 * when pointed at a server (TEMPORAL_ADDRESS); provisioning registers them on the clusters it creates.
 */
import type { Connection } from '@temporalio/client';

export type SearchAttributeTypeName = 'Keyword' | 'Int' | 'Text' | 'Bool' | 'Double' | 'Datetime' | 'KeywordList';

type IndexedValueType = NonNullable<
  Parameters<Connection['operatorService']['addSearchAttributes']>[0]['searchAttributes']
>[string];

/** temporal.api.enums.v1.IndexedValueType */
const INDEXED_VALUE_TYPES: Record<SearchAttributeTypeName, IndexedValueType> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

const GRPC_ALREADY_EXISTS = 6;

/**
 * Adds the custom search attributes from `attrs` that `namespace` does not have yet (operator service). Idempotent;
 * throws if an attribute exists with a different type. Use when pointed at an existing server (TEMPORAL_ADDRESS);
 * the dev server gets them via `--search-attribute` at start.
 */
export async function registerSearchAttributes(
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
  attrs: Record<string, SearchAttributeTypeName>,
  log: (line: string) => void = (line) => process.stderr.write(`[temporal] ${line}\n`),
): Promise<{ added: string[] }> {
  const missing = async (): Promise<Record<string, IndexedValueType>> => {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    const existing: Record<string, number> = { ...(res.systemAttributes ?? {}), ...(res.customAttributes ?? {}) };
    const out: Record<string, IndexedValueType> = {};
    for (const [name, typeName] of Object.entries(attrs)) {
      const want = INDEXED_VALUE_TYPES[typeName];
      if (want === undefined) throw new Error(`unknown search attribute type ${String(typeName)} for ${name}`);
      const have = existing[name];
      if (have === undefined) out[name] = want;
      else if (have !== want) {
        throw new Error(
          `search attribute ${name} exists in namespace ${namespace} ` +
            `with type ${typeNameOf(have)}, expected ${typeName}`,
        );
      }
    }
    return out;
  };

  const toAdd = await missing();
  const names = Object.keys(toAdd);
  if (names.length === 0) return { added: [] };
  log(`registering search attributes in namespace ${namespace}: ${names.map((n) => `${n}=${attrs[n]}`).join(', ')}`);
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: toAdd });
  } catch (err) {
    // A concurrent caller won the race: fine as long as the end state is what we want.
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
  const still = Object.keys(await missing());
  if (still.length > 0) throw new Error(`search attributes still missing after add: ${still.join(', ')}`);
  return { added: names };
}

function typeNameOf(v: number): string {
  return (Object.entries(INDEXED_VALUE_TYPES).find(([, n]) => n === v)?.[0] as string | undefined) ?? `#${v}`;
}
