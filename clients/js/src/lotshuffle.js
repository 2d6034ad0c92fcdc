// The shuffle of a Rocksteadier lot (src/core/rocksteadier.c's shuffle_rows_from) in WebAssembly, assembled here
// from the instructions below.  A subset of a large lot size draws millions of SplitMix64 numbers (the benchmark
// rocksteadier_subset(5, 2147483647, 300, lot_size => 65536): 300 lots of 24,575 steps each), and in JavaScript a
// 64-bit draw is either BigInt arithmetic (an allocation per operation: some 10 s for that call, every step of
// every lot) or 32-bit halves in Numbers (15 to 35 ns a step); WebAssembly has i64 arithmetic and runs a step in
// about 4 ns, as the extension's C.

import { OP, I32, I64, memarg32, get, set, tee, i32, i64, instantiate } from './wasm.js';

// shuffle(frontendLot, backendLot, lotSize, lowestStep): the parameters, then the locals
const FRONTEND_LOT = 0;
const BACKEND_LOT = 1;
const LOT_SIZE = 2;
const LOWEST_STEP = 3;
const I = 4; // i32 locals
const R = 5;
const AT_I = 6;
const AT_R = 7;
const T = 8;
const STATE = 9; // i64 locals
const Z = 10;
const N = 11;

// z = splitmix64_mix(z), left on the stack too
const MIX_Z = [
  ...get(Z), ...get(Z), ...i64(30), OP.i64_shr_u, OP.i64_xor, ...i64(0xbf58476d1ce4e5b9n), OP.i64_mul, ...set(Z),
  ...get(Z), ...get(Z), ...i64(27), OP.i64_shr_u, OP.i64_xor, ...i64(0x94d049bb133111ebn), OP.i64_mul, ...set(Z),
  ...get(Z), ...get(Z), ...i64(31), OP.i64_shr_u, OP.i64_xor, ...tee(Z),
];

const CODE = [
  // state = mix(frontendLot << 32 | backendLot)
  ...get(FRONTEND_LOT), OP.i64_extend_i32_u, ...i64(32), OP.i64_shl,
  ...get(BACKEND_LOT), OP.i64_extend_i32_u, OP.i64_or, ...set(Z),
  ...MIX_Z, ...set(STATE),
  // for (i = 0; i < lotSize; i++) perm[i] = i
  ...i32(0), ...set(I),
  OP.block, OP.void, OP.loop, OP.void,
  ...get(I), ...get(LOT_SIZE), OP.i32_ge_u, OP.br_if, 1,
  ...get(I), ...i32(2), OP.i32_shl, ...get(I), OP.i32_store, ...memarg32(),
  ...get(I), ...i32(1), OP.i32_add, ...set(I),
  OP.br, 0, OP.end, OP.end,
  // for (i = lotSize - 1; i >= lowestStep; i--)
  ...get(LOT_SIZE), ...i32(1), OP.i32_sub, ...set(I),
  OP.block, OP.void, OP.loop, OP.void,
  ...get(I), ...get(LOWEST_STEP), OP.i32_lt_s, OP.br_if, 1,
  //   state += 0x9E3779B97F4A7C15; z = mix(state)
  ...get(STATE), ...i64(0x9e3779b97f4a7c15n), OP.i64_add, ...tee(STATE), ...set(Z),
  ...MIX_Z, ...set(Z),
  //   r = the high 64 bits of z * (i + 1), (i + 1) <= 2^16: ((z >> 32) * n + ((z & 0xffffffff) * n >> 32)) >> 32
  ...get(I), ...i32(1), OP.i32_add, OP.i64_extend_i32_u, ...set(N),
  ...get(Z), ...i64(32), OP.i64_shr_u, ...get(N), OP.i64_mul,
  ...get(Z), ...i64(0xffffffff), OP.i64_and, ...get(N), OP.i64_mul, ...i64(32), OP.i64_shr_u,
  OP.i64_add, ...i64(32), OP.i64_shr_u, OP.i32_wrap_i64, ...set(R),
  //   swap perm[i], perm[r]
  ...get(I), ...i32(2), OP.i32_shl, ...tee(AT_I), OP.i32_load, ...memarg32(), ...set(T),
  ...get(AT_I), ...get(R), ...i32(2), OP.i32_shl, ...tee(AT_R), OP.i32_load, ...memarg32(), OP.i32_store, ...memarg32(),
  ...get(AT_R), ...get(T), OP.i32_store, ...memarg32(),
  ...get(I), ...i32(1), OP.i32_sub, ...set(I),
  OP.br, 0, OP.end, OP.end,
];

export const MAX_LOT = 65536;

let instance = null;
let perm = null;

/**
 * Rows lowestRow .. lotSize - 1 (lotSize <= 65536) of the shuffle of backend
 * lot `backendLot` seen by frontend lot `frontendLot` (both < 2^32): perm[row]
 * is the row's offset in the lot.  Fisher-Yates from the top puts row i's task
 * in place at step i, so the steps below lowestRow are skipped and those rows
 * left unfinished.  The array returned is overwritten by the next call.
 */
export function shuffleRowsFrom(frontendLot, backendLot, lotSize, lowestRow) {
  if (instance === null) {
    instance = instantiate([{ name: 'shuffle', params: [I32, I32, I32, I32], locals: [[5, I32], [3, I64]], code: CODE }],
      (MAX_LOT * 4) / 65536); // perm: 4 pages
    perm = new Int32Array(instance.exports.memory.buffer, 0, MAX_LOT);
  }
  instance.exports.shuffle(frontendLot, backendLot, lotSize, lowestRow > 1 ? lowestRow : 1);
  return perm;
}
