// Times hyparquet (pure JavaScript) decoding every column of a Parquet file: parquet_bench's
// baseline reader on the same file. Prints the best of RUNS wall times in milliseconds.
//
//   node read_hyparquet.mjs FILE [RUNS]
import fs from 'node:fs'
import { parquetMetadata, parquetRead } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const [file, runs = '3'] = process.argv.slice(2)
const buf = fs.readFileSync(file)
const bytes = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
let best = Infinity
for (let r = 0; r < Number(runs); r++) {
  const start = performance.now()
  const metadata = parquetMetadata(bytes)
  let values = 0
  // Columns only (onChunk): no row objects are built, as opscope's column read builds none.
  await parquetRead({ file: bytes, metadata, compressors, onChunk: c => { values += c.columnData.length } })
  best = Math.min(best, performance.now() - start)
  if (!values) throw new Error('no values read')
}
console.log(best.toFixed(1))
