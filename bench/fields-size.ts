// Weight of the embedded card fields' first load.
//
//   npm run bench:fields-size
//
// What a browser with an empty cache transfers to show the three fields: the merchant's library
// (/js/fields.js), the three frame pages (HTML, sent as is) and the frames' script and stylesheet (fetched
// once: the three frames share their URLs), with the scripts and stylesheet as brotli (quality 11), gzip
// (level 9) and raw. Exits 1 when the compressed total (gzip, the larger) misses the 15 KB budget.
import { framePageSizes, measureFieldsFirstLoad } from '../gateway/fields/fields-size.ts';

const BUDGET_BYTES = 15 * 1024;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

const sizes = measureFieldsFirstLoad();
console.log('Embedded card fields, first load (no cache):');
console.log('encoding   library   one frame   library + three frames');
for (const [enc, s] of Object.entries(sizes)) {
  console.log(`${enc.padEnd(10)} ${kb(s.library).padStart(8)}   ${kb(s.oneFrame).padStart(9)}   ${kb(s.total).padStart(10)}`);
}
console.log('frame pages (HTML):', JSON.stringify(framePageSizes()));
const worst = Math.max(sizes.gzip.total, sizes.br.total);
console.log(`budget: ${kb(worst)} compressed of ${kb(BUDGET_BYTES)}`);
if (worst > BUDGET_BYTES) {
  console.error('Over budget.');
  process.exitCode = 1;
}
