// Ringsteady and Rocksteadier subsetting: the extension's src/core/ringsteady.c,
// src/core/rocksteadier.c and the checks of src/subsets.c, ported.
import { argError, checkInt, MASK64 } from './hash.js';
import { shuffleRowsFrom } from './lotshuffle.js';

export const MAX_SUBSET_MEMBERS = 1 << 24;
export const MAX_LOT_SIZE = 65536;
export const MAX_ROCKSTEADIER_STEPS = 2 ** 30;

// reverse_bits64 of a frontend (< 2^32): its 32 bits reversed, in the high half
function reverseFrontend(frontend) {
  let x = frontend >>> 0;
  x = ((x >>> 1) & 0x55555555) | ((x & 0x55555555) << 1);
  x = ((x >>> 2) & 0x33333333) | ((x & 0x33333333) << 2);
  x = ((x >>> 4) & 0x0f0f0f0f) | ((x & 0x0f0f0f0f) << 4);
  x = ((x >>> 8) & 0x00ff00ff) | ((x & 0x00ff00ff) << 8);
  x = (x >>> 16) | (x << 16);
  return BigInt(x >>> 0) << 32n;
}

function log2(x) {
  return Math.floor(Math.log2(x)); // exact for the integers < 2^33 used here
}

function positionWidth(backends) {
  return backends <= 1 ? 0 : log2(backends - 1) + 1;
}

function countCongruent(backends, residue, bits) {
  return residue < backends ? Math.floor((backends - residue - 1) / 2 ** bits) + 1 : 0;
}

function countBackendsBefore(backends, width, limit) {
  if (Math.floor(limit / 2 ** width) !== 0) return backends;
  let count = 0;
  let residue = 0;
  for (let s = 0; s < width; s++) {
    if (Math.floor(limit / 2 ** (width - 1 - s)) % 2 === 1) {
      count += countCongruent(backends, residue, s + 1);
      residue += 2 ** s;
    }
  }
  return count;
}

function startRank(frontend, backends, backendScaling) {
  const position = reverseFrontend(frontend);
  let rank;
  if (backendScaling) {
    rank = Number((position * BigInt(backends) + MASK64) >> 64n);
  } else {
    const width = positionWidth(backends);
    let limit;
    if (width === 0) limit = position !== 0n ? 1 : 0;
    else limit = Number(position >> BigInt(64 - width)) + (((position << BigInt(width)) & MASK64) !== 0n ? 1 : 0);
    rank = countBackendsBefore(backends, width, limit);
  }
  return rank === backends ? 0 : rank;
}

function reversedIncrement(index, width) {
  const zeros = 2 ** width - 1 - index;
  if (zeros === 0) return 0;
  const highestZero = 2 ** log2(zeros);
  return (index % highestZero) + highestZero;
}

/** A place on the ring order of `backends` backends (ringsteady_cursor). */
class Cursor {
  constructor(backends, rank) {
    const width = positionWidth(backends);
    let backend = 0;
    let remaining = rank;
    for (let s = 0; s < width; s++) {
      const below = countCongruent(backends, backend, s + 1);
      if (remaining >= below) {
        remaining -= below;
        backend += 2 ** s;
      }
    }
    this.backends = backends;
    this.width = width;
    this.backend = backend;
  }

  next() {
    const backend = this.backend;
    let next = reversedIncrement(backend, this.width);
    if (next >= this.backends) next = reversedIncrement(next, this.width);
    this.backend = next;
    return backend;
  }
}

function subsetArguments(frontend, backends, subsetSize) {
  checkInt('frontend', frontend);
  checkInt('backends', backends);
  checkInt('subsetSize', subsetSize);
  if (frontend < 0) throw argError('range', `frontend must be at least 0, got ${frontend}`);
  if (backends < 1) throw argError('range', `number of backends must be at least 1, got ${backends}`);
  if (subsetSize < 0) throw argError('range', `subset size must be at least 0, got ${subsetSize}`);
}

function subsetMembers(backends, subsetSize) {
  const members = Math.min(subsetSize, backends);
  if (members > MAX_SUBSET_MEMBERS) {
    throw argError('limit', `subset of ${members} backends is too large (a subset has at most ${MAX_SUBSET_MEMBERS} members)`);
  }
  return members;
}

/**
 * ringsteady_subset(frontend, backends, subsetSize, backendScaling = true): the
 * backends (0 .. backends - 1) frontend task `frontend` connects to, by
 * Ringsteady subsetting, in ring order.
 */
export function ringsteadySubset(frontend, backends, subsetSize, backendScaling = true) {
  subsetArguments(frontend, backends, subsetSize);
  if (typeof backendScaling !== 'boolean') {
    throw argError('type', `backendScaling must be a boolean, got ${typeof backendScaling}`);
  }
  const count = subsetMembers(backends, subsetSize);
  const out = new Array(count);
  if (count === 0) return out;
  const cursor = new Cursor(backends, startRank(frontend, backends, backendScaling));
  for (let i = 0; i < count; i++) out[i] = cursor.next();
  return out;
}

/** The number of tasks a rocksteadier subset shuffles (rocksteadier_shuffle_steps). */
function shuffleSteps(backends, count, lotSize) {
  if (count === 0) return 0;
  const lots = Math.floor((backends - 1) / lotSize) + 1;
  return (Math.min(count + 1, lots) + 1) * lotSize;
}

/**
 * rocksteadier_subset(frontend, backends, subsetSize, lotSize = 10): Rocksteadier
 * subsetting, shuffled lots of backends visited in Ringsteady order.
 */
export function rocksteadierSubset(frontend, backends, subsetSize, lotSize = 10) {
  subsetArguments(frontend, backends, subsetSize);
  checkInt('lotSize', lotSize);
  if (lotSize < 1 || lotSize > MAX_LOT_SIZE) {
    throw argError('range', `lot size must be between 1 and ${MAX_LOT_SIZE}, got ${lotSize}`);
  }
  const count = subsetMembers(backends, subsetSize);
  const steps = shuffleSteps(backends, count, lotSize);
  if (steps > MAX_ROCKSTEADIER_STEPS) {
    throw argError('limit', `rocksteadier subset of ${count} backends in lots of ${lotSize} is too large (it would shuffle ${steps} tasks; the limit is ${MAX_ROCKSTEADIER_STEPS}; use a smaller lot size or subset size)`);
  }
  const out = new Array(count);
  if (count === 0) return out;
  const lots = Math.floor((backends - 1) / lotSize) + 1;
  const lastLot = lots - 1;
  const padding = lots * lotSize - backends;
  const frontendLot = Math.floor(frontend / lotSize);
  const firstRow = new Cursor(lotSize, frontend % lotSize).next();
  const passStart = [0];
  const passFilled = [0];
  let passes;
  if (count <= lots - 1) {
    passes = 1;
  } else {
    const last = shuffleRowsFrom(frontendLot, lastLot, lotSize, 0);
    for (passes = 0; passStart[passes] < count; passes++) {
      const row = (firstRow + passes) % lotSize;
      passStart[passes + 1] = passStart[passes] + lots - (last[row] >= lotSize - padding ? 1 : 0);
      passFilled[passes] = 0;
    }
  }
  // the rows read, firstRow .. firstRow + passes - 1 mod L: the shuffles need only those from the lowest on
  const lowestRow = firstRow + passes <= lotSize ? firstRow : 0;
  const cursor = new Cursor(lots, startRank(frontendLot, lots, true));
  let written = 0;
  for (let visit = 0; visit < lots && written < count; visit++) {
    const lot = cursor.next();
    const rows = shuffleRowsFrom(frontendLot, lot, lotSize, lowestRow);
    for (let p = 0; p < passes; p++) {
      const offset = rows[(firstRow + p) % lotSize];
      if (lot === lastLot && offset >= lotSize - padding) continue;
      const index = passStart[p] + passFilled[p]++;
      if (index < count) {
        out[index] = lot * lotSize + offset;
        written++;
      }
    }
  }
  return out;
}
