// A small assembler of WebAssembly 1.0 modules: the package's two loops of 64-bit arithmetic, the shuffle of a
// Rocksteadier lot (lotshuffle.js) and the stripes of XXH3-64's long keys (xxh3.js), are written as instructions
// here and assembled and instantiated synchronously when first used (no file to fetch, no top-level await).

// the opcodes used
export const OP = {
  block: 0x02, loop: 0x03, end: 0x0b, br: 0x0c, br_if: 0x0d, void: 0x40,
  local_get: 0x20, local_set: 0x21, local_tee: 0x22,
  i32_load: 0x28, i64_load: 0x29, i32_store: 0x36, i64_store: 0x37, i32_const: 0x41, i64_const: 0x42,
  i32_lt_s: 0x48, i32_ge_u: 0x4f, i32_add: 0x6a, i32_sub: 0x6b, i32_shl: 0x74,
  i64_add: 0x7c, i64_mul: 0x7e, i64_and: 0x83, i64_or: 0x84, i64_xor: 0x85, i64_shl: 0x86, i64_shr_u: 0x88,
  i32_wrap_i64: 0xa7, i64_extend_i32_u: 0xad,
};
export const I32 = 0x7f;
export const I64 = 0x7e;

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
export const get = (l) => [OP.local_get, l];
export const set = (l) => [OP.local_set, l];
export const tee = (l) => [OP.local_tee, l];
export const i32 = (v) => [OP.i32_const, ...sleb(v)];
export const i64 = (v) => [OP.i64_const, ...sleb(v)];
/** A load's or store's alignment hint (4 bytes, 8 bytes; any address is valid either way) and offset. */
export const memarg32 = (offset = 0) => [0x02, ...uleb(offset)];
export const memarg64 = (offset = 0) => [0x03, ...uleb(offset)];

/**
 * The instance of a module of functions, each { name, params: [types], locals: [[count, type], ...], code: [bytes
 * without the final end] }, returning nothing, all exported by name, with one memory of `pages` 64 KiB pages
 * exported as `memory` (growable).
 */
export function instantiate(functions, pages) {
  const bytes = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
    ...section(1, vec(functions.map((f) => [0x60, ...vec(f.params), ...vec([])]))), // a type per function
    ...section(3, vec(functions.map((_, i) => uleb(i)))),
    ...section(5, vec([[0x00, ...uleb(pages)]])), // memory: at least pages, no maximum
    ...section(7, vec([...functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]), [...name('memory'), 0x02, 0]])),
    ...section(10, vec(functions.map((f) => {
      const body = [...vec(f.locals), ...f.code, OP.end];
      return [...uleb(body.length), ...body];
    }))),
  ]);
  return new WebAssembly.Instance(new WebAssembly.Module(bytes));
}
