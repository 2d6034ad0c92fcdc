// The shuffle of a Rocksteadier lot (src/core/rocksteadier.c's shuffle_rows_from) in WebAssembly, assembled here
// from the instructions below.  A subset of a large lot size draws millions of SplitMix64 numbers (the benchmark
// rocksteadier_subset(5, 2147483647, 300, lot_size => 65536): 300 lots of 24,575 steps each), and in JavaScript a
// 64-bit draw is either BigInt arithmetic (an allocation per operation: some 10 s for that call, every step of
// every lot) or 32-bit halves in Numbers (15 to 35 ns a step); WebAssembly has i64 arithmetic and runs a step in
// about 4 ns, as the extension's C.

// the opcodes used (WebAssembly 1.0)
const OP = {
  block: 0x02, loop: 0x03, end: 0x0b, br: 0x0c, br_if: 0x0d, void: 0x40,
  local_get: 0x20, local_set: 0x21, local_tee: 0x22,
  i32_load: 0x28, i32_store: 0x36, i32_const: 0x41, i64_const: 0x42,
  i32_lt_s: 0x48, i32_ge_u: 0x4f, i32_add: 0x6a, i32_sub: 0x6b, i32_shl: 0x74,
  i64_add: 0x7c, i64_mul: 0x7e, i64_and: 0x83, i64_or: 0x84, i64_xor: 0x85, i64_shl: 0x86, i64_shr_u: 0x88,
  i32_wrap_i64: 0xa7, i64_extend_i32_u: 0xad,
};
const I32 = 0x7f;
const I64 = 0x7e;
const MEMARG = [0x02, 0x00]; // 4-byte aligned, offset 0

function uleb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function sleb(v) {
  v = BigInt.asIntN(64, BigInt(v));
  const out = [];
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    if ((v === 0n && !(b & 0x40)) || (v === -1n && (b & 0x40))) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

const vec = (items) => [...uleb(items.length), ...items.flat()];
const name = (s) => vec([...s].map((c) => c.charCodeAt(0)));
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const get = (l) => [OP.local_get, l];
const set = (l) => [OP.local_set, l];
const tee = (l) => [OP.local_tee, l];
const i32 = (v) => [OP.i32_const, ...sleb(v)];
const i64 = (v) => [OP.i64_const, ...sleb(v)];

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

const BODY = [
  ...vec([[5, I32], [3, I64]]),
  // state = mix(frontendLot << 32 | backendLot)
  ...get(FRONTEND_LOT), OP.i64_extend_i32_u, ...i64(32), OP.i64_shl,
  ...get(BACKEND_LOT), OP.i64_extend_i32_u, OP.i64_or, ...set(Z),
  ...MIX_Z, ...set(STATE),
  // for (i = 0; i < lotSize; i++) perm[i] = i
  ...i32(0), ...set(I),
  OP.block, OP.void, OP.loop, OP.void,
  ...get(I), ...get(LOT_SIZE), OP.i32_ge_u, OP.br_if, 1,
  ...get(I), ...i32(2), OP.i32_shl, ...get(I), OP.i32_store, ...MEMARG,
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
  ...get(I), ...i32(2), OP.i32_shl, ...tee(AT_I), OP.i32_load, ...MEMARG, ...set(T),
  ...get(AT_I), ...get(R), ...i32(2), OP.i32_shl, ...tee(AT_R), OP.i32_load, ...MEMARG, OP.i32_store, ...MEMARG,
  ...get(AT_R), ...get(T), OP.i32_store, ...MEMARG,
  ...get(I), ...i32(1), OP.i32_sub, ...set(I),
  OP.br, 0, OP.end, OP.end,
  OP.end,
];

export const MAX_LOT = 65536;

const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
  ...section(1, vec([[0x60, ...vec([I32, I32, I32, I32]), ...vec([])]])), // type: (i32 i32 i32 i32) -> ()
  ...section(3, vec([0])), // function 0 of type 0
  ...section(5, vec([[0x00, ...uleb((MAX_LOT * 4) / 65536)]])), // memory: perm, 4 pages
  ...section(7, vec([[...name('shuffle'), 0x00, 0], [...name('memory'), 0x02, 0]])),
  ...section(10, vec([[...uleb(BODY.length), ...BODY]])),
]);

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
    instance = new WebAssembly.Instance(new WebAssembly.Module(MODULE));
    perm = new Int32Array(instance.exports.memory.buffer, 0, MAX_LOT);
  }
  instance.exports.shuffle(frontendLot, backendLot, lotSize, lowestRow > 1 ? lowestRow : 1);
  return perm;
}
