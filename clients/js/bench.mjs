// node clients/js/bench.mjs RINGFILE: times the client's two heaviest calls, each the best of 3 runs (wall
// clock, in seconds): rocksteadier_subset(5, 2147483647, 300, lot_size => 65536), and PartitionRing.parse of the
// ring text in RINGFILE (as `SELECT ring::text` prints it; reading the file is not timed).  Prints one JSON line
// per case, {"case": ..., "seconds": S}, and nothing else; it asserts nothing about time.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { PartitionRing, rocksteadierSubset } from './src/index.js';

const RUNS = 3;

// one line: {"case": NAME, "seconds": S}
const line = (name, seconds) => console.log(`{"case": ${JSON.stringify(name)}, "seconds": ${seconds}}`);

function best(run) {
  let seconds = Infinity;
  let result;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    result = run();
    seconds = Math.min(seconds, (performance.now() - start) / 1000);
  }
  return { seconds, result };
}

if (process.argv.length !== 3) {
  process.stderr.write('usage: node bench.mjs RINGFILE (a file holding a ring\'s text)\n');
  process.exit(2);
}
const text = readFileSync(process.argv[2], 'utf8');

const rock = best(() => rocksteadierSubset(5, 2147483647, 300, 65536));
if (rock.result.length !== 300) throw new Error('rocksteadierSubset returned ' + rock.result.length + ' members');
line('rocksteadier_subset(5, 2147483647, 300, lot_size => 65536)', rock.seconds);

const ring = best(() => PartitionRing.parse(text));
line(`ring text of part power ${ring.result.partPower}`, ring.seconds);
