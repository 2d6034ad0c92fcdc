// Types of the subsetting client (src/index.js).

/** An integer key, taken as its 64 bits: a BigInt in [-2^63, 2^64) or a safe-integer Number. */
export type IntegerKey = bigint | number;
/** A text key (hashed as its UTF-8 bytes) or a bytes key (hashed as it is), through XXH3-64. */
export type HashedKey = string | Uint8Array;
export type Key = IntegerKey | HashedKey;

/**
 * The SQLSTATE an error of a bad argument carries as `sqlstate`, the one the extension raises for the same argument:
 * 22003 a number out of range, 22023 an invalid parameter value, 22P02 a malformed value (a ring's text, an integer
 * or uuid string), 23514 a key no partition takes, 54000 a program limit exceeded.
 */
export type SqlState = '22003' | '22023' | '22P02' | '23514' | '54000';

/**
 * What the package throws for a bad argument's value (a RangeError, or a SyntaxError for a malformed string); an
 * argument of the wrong JavaScript type is a plain TypeError.
 */
export interface SubsettingError extends Error {
  readonly sqlstate: SqlState;
}

/**
 * XXH3-64 (seed 0) of a string's UTF-8 bytes or of bytes, signed, as the extension's xxh3_64; of an integer key,
 * XXH3-64 of its 8 little-endian bytes (xxh3_64(bigint), hash4j's hashLongToLong).
 */
export function xxh3_64(key: Key): bigint;
/** The bucket in [0, buckets) by JumpBackHash (hash4j, SplitMix64); buckets 1 to 2^31 - 1. */
export function jumpbackhash(key: Key, buckets: number): number;
/** The bucket in [0, buckets) by Lamping and Veach's jump consistent hash; buckets 1 to 2^31 - 1. */
export function jumphash(key: Key, buckets: number): number;

/** SplitMix64 (Java's SplittableRandom), the generator JumpBackHash draws from. */
export class SplitMix64 {
  constructor(seed: bigint);
  state: bigint;
  next(): bigint;
}

/** The most removed buckets of a JumpBackAnchorHash set (2^20). */
export const MAX_REMOVED: number;

/** A JumpBackAnchorHash set, checked and decoded once for many lookups. */
export class JumpBackAnchorSet {
  constructor(buckets: number, removed?: readonly number[]);
  static fromState(state: Uint8Array): JumpBackAnchorSet;
  readonly buckets: number;
  readonly removed: readonly number[];
  isRemoved(bucket: number): boolean;
  bucket(key: Key): number;
  state(): Uint8Array;
}

/** jumpbackanchorhash(key, buckets, removed) or jumpbackanchorhash(key, state). */
export function jumpbackanchorhash(key: Key, buckets: number, removed?: readonly number[]): number;
export function jumpbackanchorhash(key: Key, state: Uint8Array): number;
/** jumpbackanchorhash_state: the state bytes (int32 little-endian: buckets, then removed oldest first). */
export function jumpbackanchorhashState(buckets: number, removed?: readonly number[]): Uint8Array;
/** jumpbackanchorhash_buckets and jumpbackanchorhash_removed of state bytes. */
export function jumpbackanchorhashFromState(state: Uint8Array): { buckets: number; removed: number[] };
/** hash4j's addBucket(). */
export function jumpbackanchorhashAddBucket(buckets: number, removed?: readonly number[]): { buckets: number; removed: number[]; bucket: number };
/** hash4j's removeBucket(bucket). */
export function jumpbackanchorhashRemoveBucket(buckets: number, removed: readonly number[], bucket: number): { buckets: number; removed: number[] };

export const MAX_SUBSET_MEMBERS: number;
export const MAX_LOT_SIZE: number;
/** ringsteady_subset: the backends frontend `frontend` connects to, in ring order. */
export function ringsteadySubset(frontend: number, backends: number, subsetSize: number, backendScaling?: boolean): number[];
/** rocksteadier_subset: shuffled lots of backends in Ringsteady order (lotSize 1 to 65536, default 10). */
export function rocksteadierSubset(frontend: number, backends: number, subsetSize: number, lotSize?: number): number[];

export interface RingNode {
  readonly id: number;
  readonly zone: number;
  readonly region: number;
  readonly weight: number;
}

/** A partition ring read from the extension's text form (`SELECT ring::text`). */
export class PartitionRing {
  static parse(text: string): PartitionRing;
  readonly partPower: number;
  readonly replicas: number;
  readonly seed: bigint;
  /** The nodes, sorted by id. */
  readonly nodes: readonly RingNode[];
  readonly partitions: number;
  /** ring_partition: an integer key's top partPower bits as they are; a text or bytes key's XXH3-64's. */
  partition(key: Key): number;
  /** ring_nodes: node ids of the key's replicas, primary first. */
  nodesOf(key: Key): number[];
  /** ring_partition_nodes. */
  partitionNodes(partition: number): number[];
  /** ring_handoff_nodes: up to count (default 3) further nodes, in Swift's get_more_nodes order. */
  handoffNodes(key: Key, count?: number): number[];
  /** ring_partition_handoff_nodes. */
  partitionHandoffNodes(partition: number, count?: number): number[];
}

/** The document of routing_layout(parent) (docs/reference.md, "Routing layout"), parsed. */
export interface RoutingLayout {
  table: string;
  method: 'jumpbackhash' | 'jumphash' | 'jumpbackanchorhash' | 'hash_operator_class';
  hash_function: string;
  key: string;
  key_column: string | null;
  key_type: RouterKeyType;
  key_hash: 'value' | 'xxh3_64';
  buckets: number;
  removed: number[];
  partitions: { bucket: number | null; partition: string; server: string | null; remote_table: string | null }[];
  servers: Record<string, Record<string, string>>;
  in_progress: { operation: string; phase: string; interrupted: boolean; buckets: (number | null)[] | null } | null;
  version: string;
}

export type RouterKeyType = 'smallint' | 'integer' | 'bigint' | 'text' | 'bytea' | 'uuid';

/**
 * A key as Router.route takes it, per the layout's key_type: smallint, integer, bigint: a BigInt, a safe-integer
 * Number or a decimal string; text: a string; bytea: a Uint8Array (a Buffer); uuid: a string in uuid text form
 * (parsed as PostgreSQL does, hashed as its 16 bytes) or its 16 bytes.
 */
export type RouteKey = bigint | number | string | Uint8Array;

/** Where a key goes: its bucket, its partition (schema-qualified), its server (null: the coordinator) and the table there. */
export interface Route {
  readonly bucket: number;
  readonly partition: string;
  readonly server: string | null;
  readonly remoteTable: string | null;
}

/** A partition of the layout; bucket null when its bound is not one bucket of the layout. */
export interface RouterPartition {
  readonly bucket: number | null;
  readonly partition: string;
  readonly server: string | null;
  readonly remoteTable: string | null;
}

/** The operation on the table that has not ended; buckets null: every bucket. */
export interface RoutingInProgress {
  readonly operation: string;
  readonly phase: string;
  readonly interrupted: boolean;
  readonly buckets: readonly (number | null)[] | null;
}

/**
 * A router of a table's keys, from routing_layout(parent) as JSON text or as the parsed jsonb. A document that is
 * not such a layout throws a RangeError with sqlstate '22023'.
 */
export class Router {
  constructor(layout: string | RoutingLayout);
  readonly table: string;
  readonly method: RoutingLayout['method'];
  readonly hashFunction: string;
  readonly key: string;
  readonly keyColumn: string | null;
  readonly keyType: RouterKeyType;
  readonly keyHash: 'value' | 'xxh3_64';
  readonly buckets: number;
  readonly removed: readonly number[];
  readonly partitions: readonly RouterPartition[];
  /** Per server that holds a partition, the options a client connects with (host, port, dbname, ...; no secrets). */
  readonly servers: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly inProgress: RoutingInProgress | null;
  /** Changes with the layout, a partition's place, and an operation beginning or ending: reload on a new one. */
  readonly version: string;
  /** The key's bucket by the layout's hash function. */
  bucket(key: RouteKey): number;
  /**
   * The key's route (frozen). Errors carry `sqlstate`: 22003 an integer beyond the key type's range, 22P02 a
   * malformed integer or uuid string, 23514 a bucket no partition holds; a key of another JS type is a TypeError.
   */
  route(key: RouteKey): Route;
  /** Whether the bucket's keys go through the coordinator: while inProgress names it (buckets null: every bucket). */
  throughCoordinator(bucket: number | Route): boolean;
}
