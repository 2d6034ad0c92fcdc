// subsetting: the routing of the subsetting PostgreSQL extension, computed in
// JavaScript exactly as the database computes it.  See README.md.
export { jumpbackhash, jumphash, xxh3_64, SplitMix64 } from './hash.js';
export {
  JumpBackAnchorSet,
  jumpbackanchorhash,
  jumpbackanchorhashState,
  jumpbackanchorhashFromState,
  jumpbackanchorhashAddBucket,
  jumpbackanchorhashRemoveBucket,
  MAX_REMOVED,
} from './anchor.js';
export { ringsteadySubset, rocksteadierSubset, MAX_SUBSET_MEMBERS, MAX_LOT_SIZE } from './subsets.js';
export { PartitionRing } from './ring.js';
export { Router } from './routing.js';
