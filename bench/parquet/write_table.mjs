// Writes parquet_bench's table with parquet-wasm (the Rust parquet crate compiled to WebAssembly),
// a writer independent of opscope's reader: a Neuron-Explorer-like instruction table.
//
//   node write_table.mjs OUT ROWS CODEC [V1|V2]     CODEC: SNAPPY, ZSTD, UNCOMPRESSED, ...
//
// Columns (the writer's defaults otherwise: dictionary encoding where it pays, 1 MiB pages, row
// groups of 1 Mi rows): timestamp, duration, instruction_id (INT64), nc_idx, hlo_id (INT32), engine
// and opcode (strings, 6 and 80 distinct), utilization (DOUBLE, 10% null), semaphores
// (list<int64> of 0-3 elements). The values come from a fixed-seed generator.
import fs from 'node:fs'
import { Dictionary, Field, Float64, Int32, Int64, List, Table, Utf8, makeData, makeVector,
  tableToIPC, vectorFromArray } from 'apache-arrow'
import { Compression, Table as WasmTable, WriterPropertiesBuilder, WriterVersion, writeParquet }
  from 'parquet-wasm'

const [out, rowsText, codec = 'SNAPPY', version = 'V1'] = process.argv.slice(2)
const n = Number(rowsText)
let seed = 12345
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

const ts = new BigInt64Array(n)
const dur = new BigInt64Array(n)
const ids = new BigInt64Array(n)
const nc = new Int32Array(n)
const hlo = new Int32Array(n)
const engine = new Int32Array(n)
const opcode = new Int32Array(n)
const util = new Float64Array(n)
const valid = new Uint8Array(Math.ceil(n / 8))
const offsets = new Int32Array(n + 1)
let t = 1700000000000000000n
let nulls = 0
for (let i = 0; i < n; i++) {
  const d = BigInt(50 + Math.floor(rand() * 2000))
  t += BigInt(Math.floor(rand() * 300))
  ts[i] = t
  dur[i] = d
  ids[i] = BigInt(i)
  nc[i] = i & 1
  hlo[i] = Math.floor(rand() * 5000)
  engine[i] = Math.floor(rand() * 6)
  opcode[i] = Math.floor(rand() * rand() * 80)
  if (rand() < 0.1) nulls++
  else valid[i >> 3] |= 1 << (i & 7)
  util[i] = rand()
  offsets[i + 1] = offsets[i] + Math.floor(rand() * 4)
}
const items = new BigInt64Array(offsets[n])
for (let i = 0; i < items.length; i++) items[i] = BigInt(Math.floor(rand() * 1000))

const dict = (names, indices) => makeVector(makeData({
  type: new Dictionary(new Utf8(), new Int32()), length: n, data: indices,
  dictionary: vectorFromArray(names, new Utf8()),
}))
const engines = ['Tensor', 'Vector', 'Scalar', 'GpSimd', 'Sync', 'DMA']
const opcodes = Array.from({ length: 80 }, (_, i) => `opcode_${i.toString(36)}_${'x'.repeat(i % 9)}`)
const table = new Table({
  timestamp: makeVector(ts),
  duration: makeVector(dur),
  instruction_id: makeVector(ids),
  nc_idx: makeVector(nc),
  hlo_id: makeVector(hlo),
  engine: dict(engines, engine),
  opcode: dict(opcodes, opcode),
  utilization: makeVector(makeData({ type: new Float64(), length: n, nullCount: nulls,
    nullBitmap: valid, data: util })),
  semaphores: makeVector(makeData({
    type: new List(new Field('item', new Int64(), true)), length: n, valueOffsets: offsets,
    child: makeData({ type: new Int64(), length: items.length, data: items }),
  })),
})
const props = new WriterPropertiesBuilder()
  .setCompression(Compression[codec])
  .setWriterVersion(WriterVersion[version])
  .setMaxRowGroupSize(1 << 20)
  .build()
fs.writeFileSync(out, writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), props))
