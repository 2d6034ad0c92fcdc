// Partition rings read from the extension's text form (the partition_ring
// type's output), and their lookups: src/core/ring_json.c's checks,
// ring_partition_of and src/core/ring_lookup.c's handoff walk, ported.
import { createHash } from 'node:crypto';
import { anyKey, argError, checkInt, describe } from './hash.js';

export const MIN_PART_POWER = 1;
export const MAX_PART_POWER = 24;
export const MAX_NODES = 65535;
export const MAX_SLOTS = 2 ** 26;

function bad(message) {
  const e = new SyntaxError(`invalid partition ring text: ${message}`);
  e.sqlstate = '22P02'; // as the extension's partition_ring input
  return e;
}

function intField(what, value, min = -2147483648, max = 2147483647) {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw bad(`${what} must be an integer, got ${describe(value)}`);
  if (value < min || value > max) throw bad(`${what} must be between ${min} and ${max}, got ${value}`);
  return value;
}

const NOT_INTEGER = /-?\d+(?:\.\d+(?:[eE][+-]?\d+)?|[eE][+-]?\d+)/y;
const isDigit = (c) => c >= 48 && c <= 57;

/**
 * Throws at the first number of the text written with a fraction or an
 * exponent (NOT_INTEGER) that is not a weight.  Such a number has a digit
 * followed by '.', 'e' or 'E' where its integer part ends: those places are
 * found by indexOf (a ring's text is megabytes of integers, and a regular
 * expression tried at every character took a quarter of the parse), and the
 * expression is tried from the start of the digits before each, as a scan of
 * the whole text from its start would find the same numbers.
 */
function checkIntegers(text) {
  const marks = ['.', 'e', 'E'];
  const next = marks.map((c) => text.indexOf(c)); // the next place of each, -1 past the last
  let end = 0; // the end of the last number read: the scan goes on from there
  for (;;) {
    let k = -1;
    for (let j = 0; j < marks.length; j++) if (next[j] !== -1 && (k === -1 || next[j] < next[k])) k = j;
    if (k === -1) return;
    const q = next[k];
    next[k] = text.indexOf(marks[k], q + 1);
    if (q < end || q === 0 || !isDigit(text.charCodeAt(q - 1))) continue;
    let start = q - 1;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    if (start > 0 && text.charCodeAt(start - 1) === 45) start--; // '-'
    if (start < end) start = end;
    // no number of NOT_INTEGER starts before `start` past `end`; if none starts at it, none does before q
    NOT_INTEGER.lastIndex = start;
    const m = NOT_INTEGER.exec(text);
    if (m === null) continue;
    if (!/"weight"\s*:\s*$/.test(text.slice(Math.max(0, start - 40), start))) {
      throw bad(`expected an integer at character ${start + 1}, got ${m[0]}`);
    }
    end = start + m[0].length;
  }
}

/**
 * The index in `list` (sorted by id) of the node a value of "assignment" names,
 * or -1: a table by id when the ids span at most 2^20 values (a lookup per
 * slot, millions of them in a large ring), else a Map.  Either finds a node
 * only for a Number equal to its id, as Map.get does.
 */
function nodeIndexes(list) {
  const low = list[0].id;
  const span = list[list.length - 1].id - low + 1;
  if (span > 1 << 20) {
    const map = new Map(list.map((n, i) => [n.id, i]));
    return (value) => map.get(value) ?? -1;
  }
  const table = new Int32Array(span).fill(-1);
  list.forEach((n, i) => {
    table[n.id - low] = i;
  });
  return (value) => {
    if (typeof value !== 'number') return -1;
    const k = value - low;
    return k >= 0 && k < span && Math.floor(k) === k ? table[k] : -1;
  };
}

/** Where Swift's handoff walk starts for a partition (ring_handoff_start). */
export function handoffStart(partPower, partition) {
  const digest = createHash('md5').update(String(partition)).digest();
  return digest.readUInt32BE(0) >>> (32 - partPower);
}

/**
 * A partition ring: 2^partPower partitions, each with `replicas` replicas on
 * nodes.  Read it from the extension's text form with PartitionRing.parse
 * (`SELECT ring::text`), and look keys up exactly as ring_partition,
 * ring_nodes and ring_handoff_nodes do.
 */
export class PartitionRing {
  /**
   * @param {string} text the ring's text form, as the extension prints it
   */
  static parse(text) {
    if (typeof text !== 'string') throw argError('type', `ring text must be a string, got ${describe(text)}`);
    let value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw bad(e.message);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad('not a JSON object');
    // JSON.parse reads 1.0 and 1e0 as 1: the extension takes only a weight written with a fraction or an exponent
    checkIntegers(text);
    for (const k of Object.keys(value)) {
      if (!['part_power', 'replicas', 'seed', 'nodes', 'assignment'].includes(k)) throw bad(`unknown key "${k}"`);
    }
    for (const k of ['part_power', 'replicas', 'nodes', 'assignment']) {
      if (!(k in value)) throw bad(`key "${k}" is missing`);
    }
    // the seed is a 64-bit integer, which JSON.parse would round: read its digits
    let seed = 0n;
    if ('seed' in value) {
      const seedMatch = /"seed"\s*:\s*(-?\d+)\s*[,}]/.exec(text);
      if (typeof value.seed !== 'number' || !seedMatch) throw bad(`seed must be an integer, got ${describe(value.seed)}`);
      seed = BigInt(seedMatch[1]);
      if (seed < -(2n ** 63n) || seed >= 2n ** 63n) throw bad(`seed must be a 64-bit integer, got ${seedMatch[1]}`);
    }
    return new PartitionRing(value.part_power, value.replicas, value.nodes, value.assignment, seed);
  }

  constructor(partPower, replicas, nodes, assignment, seed = 0n) {
    intField('part_power', partPower);
    intField('replicas', replicas);
    if (partPower < MIN_PART_POWER || partPower > MAX_PART_POWER) throw bad(`part_power must be between ${MIN_PART_POWER} and ${MAX_PART_POWER}, got ${partPower}`);
    if (replicas < 1) throw bad(`replicas must be at least 1, got ${replicas}`);
    if (!Array.isArray(nodes)) throw bad('"nodes" must be an array');
    if (nodes.length < 1) throw bad('a ring needs at least one node');
    if (nodes.length > MAX_NODES) throw bad(`too many nodes: ${nodes.length} (at most ${MAX_NODES})`);
    if (replicas * 2 ** partPower > MAX_SLOTS) throw bad(`${replicas} replicas of 2^${partPower} partitions are more than ${MAX_SLOTS} slots`);
    const list = nodes.map((n, i) => {
      if (n === null || typeof n !== 'object' || Array.isArray(n)) throw bad(`node ${i + 1} is not an object`);
      for (const k of Object.keys(n)) if (!['id', 'zone', 'region', 'weight'].includes(k)) throw bad(`node ${i + 1} has an unknown key "${k}"`);
      if (!('id' in n) || !('zone' in n) || !('weight' in n)) throw bad(`node ${i + 1} needs "id", "zone" and "weight"`);
      const id = intField('a node id', n.id);
      if (typeof n.weight !== 'number') throw bad(`the weight of node ${id} must be a number, got ${describe(n.weight)}`);
      if (n.weight < 0 || Object.is(n.weight, -0)) throw bad(`the weight of node ${id} must not be negative, got ${n.weight}`);
      return { id, zone: intField(`the zone of node ${id}`, n.zone), region: 'region' in n ? intField(`the region of node ${id}`, n.region) : 0, weight: n.weight };
    }).sort((a, b) => a.id - b.id);
    for (let i = 1; i < list.length; i++) if (list[i].id === list[i - 1].id) throw bad(`node id ${list[i].id} appears twice`);
    const positive = list.filter((n) => n.weight > 0).length;
    if (positive === 0) throw bad('every node weight is zero');
    if (replicas > positive) throw bad(`${replicas} replicas need as many nodes of positive weight, there are ${positive}`);
    const parts = 2 ** partPower;
    if (!Array.isArray(assignment) || assignment.length !== replicas || assignment.some((row) => !Array.isArray(row) || row.length !== parts)) {
      throw bad(`"assignment" must be ${replicas} arrays (one per replica) of ${parts} node ids`);
    }
    const indexOf = nodeIndexes(list);
    // by partition: the node indexes of partition x's replicas at [x * R + r]
    const byPartition = new Uint16Array(parts * replicas);
    for (let r = 0; r < replicas; r++) {
      const row = assignment[r];
      for (let x = 0; x < parts; x++) {
        const index = indexOf(row[x]);
        if (index === -1) throw bad(`replica ${r} of partition ${x} is on node ${describe(row[x])}, which is not in "nodes"`);
        for (let s = 0; s < r; s++) {
          if (byPartition[x * replicas + s] === index) throw bad(`partition ${x} has two replicas on node ${row[x]}`);
        }
        byPartition[x * replicas + r] = index;
      }
    }
    this.partPower = partPower;
    this.replicas = replicas;
    this.seed = seed;
    /** The nodes, sorted by id. */
    this.nodes = Object.freeze(list.map((n) => Object.freeze(n)));
    this.byPartition = byPartition;
    // failure domains for the handoff walk: regions and (region, zone) pairs
    const regions = new Map();
    const zones = new Map();
    this.regionOf = new Uint32Array(list.length);
    this.zoneOf = new Uint32Array(list.length);
    list.forEach((n, i) => {
      const zk = `${n.region},${n.zone}`;
      if (!regions.has(n.region)) regions.set(n.region, regions.size);
      if (!zones.has(zk)) zones.set(zk, zones.size);
      this.regionOf[i] = regions.get(n.region);
      this.zoneOf[i] = zones.get(zk);
    });
    this.regionCount = regions.size;
    this.zoneCount = zones.size;
  }

  /** The number of partitions, 2^partPower. */
  get partitions() {
    return 2 ** this.partPower;
  }

  /**
   * ring_partition(ring, key): a BigInt (or Number) key's top partPower bits, as
   * they are (hash integer ids first: see the README); a string or Uint8Array
   * key's by its XXH3-64.
   */
  partition(key) {
    return Number(anyKey('key', key) >> BigInt(64 - this.partPower));
  }

  #checkPartition(partition) {
    checkInt('partition', partition);
    if (partition < 0 || partition >= this.partitions) {
      throw argError('range', `partition must be between 0 and ${this.partitions - 1}, got ${partition}`);
    }
    return partition;
  }

  /** ring_partition_nodes(ring, partition): node ids of its replicas, primary first. */
  partitionNodes(partition) {
    this.#checkPartition(partition);
    const out = [];
    for (let r = 0; r < this.replicas; r++) out.push(this.nodes[this.byPartition[partition * this.replicas + r]].id);
    return out;
  }

  /** ring_nodes(ring, key): node ids of the key's replicas, primary first. */
  nodesOf(key) {
    return this.partitionNodes(this.partition(key));
  }

  /** ring_handoff_nodes(ring, key, count = 3): further nodes for the key's partition. */
  handoffNodes(key, count = 3) {
    const partition = this.partition(key);
    return this.partitionHandoffNodes(partition, count);
  }

  /**
   * ring_partition_handoff_nodes(ring, partition, count = 3): up to `count` node
   * ids in the order of Swift's Ring.get_more_nodes(partition).
   */
  partitionHandoffNodes(partition, count = 3) {
    this.#checkPartition(partition);
    checkInt('count', count);
    if (count < 0 || count > MAX_NODES) {
      throw argError('range', `count must be between 0 and ${MAX_NODES}, got ${count}`);
    }
    const wanted = Math.min(count, this.nodes.length);
    const R = this.replicas;
    const parts = this.partitions;
    const inc = parts > 65536 ? parts / 65536 : 1;
    const start = handoffStart(this.partPower, partition);
    const used = new Uint8Array(this.nodes.length);
    const usedZones = new Uint8Array(this.zoneCount);
    const usedRegions = new Uint8Array(this.regionCount);
    let nodesUsed = 0;
    let zonesUsed = 0;
    let regionsUsed = 0;
    const mark = (map, i) => (map[i] ? 0 : ((map[i] = 1), 1));
    for (let r = 0; r < R; r++) {
      const node = this.byPartition[partition * R + r];
      nodesUsed += mark(used, node);
      zonesUsed += mark(usedZones, this.zoneOf[node]);
      regionsUsed += mark(usedRegions, this.regionOf[node]);
    }
    const out = [];
    if (wanted === 0) return out;
    const done = (pass) => (pass === 0 && regionsUsed === this.regionCount) ||
      (pass === 1 && zonesUsed === this.zoneCount) || (pass === 2 && nodesUsed === this.nodes.length);
    for (let pass = 0; pass <= 2; pass++) {
      let hp = start;
      let wrapped = false;
      for (;;) {
        if (!wrapped && hp >= parts) {
          wrapped = true;
          hp = inc - ((parts - start) % inc);
        }
        if (wrapped && hp >= start) break;
        if (done(pass)) break;
        for (let r = 0; r < R; r++) {
          const node = this.byPartition[hp * R + r];
          const zone = this.zoneOf[node];
          const region = this.regionOf[node];
          if (used[node]) continue;
          if (pass === 0 && usedRegions[region]) continue;
          if (pass === 1 && usedZones[zone]) continue;
          out.push(this.nodes[node].id);
          nodesUsed += mark(used, node);
          if (pass <= 1) zonesUsed += mark(usedZones, zone);
          if (pass === 0) regionsUsed += mark(usedRegions, region);
          if (out.length === wanted) return out;
          if (done(pass)) break;
        }
        hp += inc;
      }
    }
    return out;
  }
}
