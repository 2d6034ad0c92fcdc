// Type-checked against index.d.ts by ./unit-tests (tsc --noEmit --strict): the package's API as an application in
// TypeScript uses it.  Not run.
import {
  jumpbackhash, jumphash, xxh3_64, jumpbackanchorhash, jumpbackanchorhashState, ringsteadySubset, rocksteadierSubset,
  PartitionRing, Router, type Route, type SubsettingError, type SqlState,
} from 'subsetting';

const bucket: number = jumpbackhash(42n, 16) + jumphash('user-42', 16) + jumpbackanchorhash(7, 16, [3]);
const hash: bigint = xxh3_64(new Uint8Array([1, 2, 3]));
const state: Uint8Array = jumpbackanchorhashState(16, [3]);
const subset: number[] = [...ringsteadySubset(3, 10, 4), ...rocksteadierSubset(3, 10, 4, 16)];
const ring: PartitionRing = PartitionRing.parse('');
const router = new Router('{}');
const route: Route = router.route('3f2504e0-4f89-11d3-9a0c-0305e82c3301');
const server: string | null = route.server;

try {
  router.route(2n ** 63n);
} catch (e) {
  const code: SqlState | undefined = (e as Partial<SubsettingError>).sqlstate;
  if (code === '22003' && e instanceof RangeError) console.log(e.message);
}

console.log(bucket, hash, state, subset, ring, server, jumpbackanchorhash(1n, state));
