// Generates neuron_bench's Neuron Explorer output directory with parquet-wasm (the Rust parquet
// crate compiled to WebAssembly), a writer independent of opscope's reader, in the documented
// schema (field types read from the schema reference by tests/import/neuron/neuron_tables.mjs).
//
//   node write_profile.mjs SCHEMA_REFERENCE.md OUT_DIR [--instructions N] [--dma N]
//        [--part-rows N] [--row-group-rows N] [--codec SNAPPY|ZSTD|...]
//
// Defaults: 50,000,000 instructions and 5,000,000 DMA packets; a table larger than --part-rows
// (2,000,000) is split as Neuron Explorer splits it (`Instruction_0.parquet`, `Instruction_1...`),
// row groups of --row-group-rows (1,000,000). The big tables are generated one part at a time, so
// the writer holds one part, never the whole table. Instruction gets every required field plus
// timeline_track, pcore_idx and hlo_name; DmaPacket every required field plus queue_name,
// queue_idx, pcore_idx and engine_idx. Values come from a fixed-seed generator: one instruction
// every 40 ns on average over 5 engines, durations 30..1,000 ns, 80 opcodes (skewed), 100
// executions covering the span. Prints the directory's size in bytes.
import fs from 'node:fs'
import path from 'node:path'
import { Dictionary, Float32, Int32, Table, Utf8, makeData, makeVector, tableToIPC,
  vectorFromArray } from 'apache-arrow'
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet }
  from 'parquet-wasm'
import { readDocumentedSchema, writeSchemaFields, writeTable }
  from '../../tests/import/neuron/neuron_tables.mjs'

const args = process.argv.slice(2)
const [reference, out] = args
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i < 0 ? fallback : args[i + 1]
}
const instructions = Number(option('--instructions', 50000000))
const packets = Number(option('--dma', 5000000))
const partRows = Number(option('--part-rows', 2000000))
const rowGroupRows = Number(option('--row-group-rows', 1000000))
const codec = option('--codec', 'SNAPPY')

const schema = readDocumentedSchema(reference)
const kBase = 1700000000000000000n  // epoch ns: first_hw_timestamp is already an epoch time
const kBaseLo = Number(kBase % 4294967296n)
const kBaseHi = Number(kBase / 4294967296n)
const kStepNs = 40                  // one instruction every 40 ns on average
const span = instructions * kStepNs
const executions = 100

let seed = 12345
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

// Int64 columns as BigInt64Array filled through 32-bit halves (exact below 2^53, no BigInt per row).
class Int64Column {
  constructor(n) {
    this.data = new BigInt64Array(n)
    this.halves = new Uint32Array(this.data.buffer)
  }
  set(i, v) {
    this.halves[2 * i] = v % 4294967296
    this.halves[2 * i + 1] = Math.floor(v / 4294967296)
  }
  // kBase + offset (offset < 2^53), exact although the sum is past 2^53.
  setTime(i, offset) {
    const lo = kBaseLo + (offset % 4294967296)
    this.halves[2 * i] = lo % 4294967296
    this.halves[2 * i + 1] = kBaseHi + Math.floor(offset / 4294967296) + Math.floor(lo / 4294967296)
  }
}
const dictionary = (names, indices) => makeVector(makeData({
  type: new Dictionary(new Utf8(), new Int32()), length: indices.length, data: indices,
  dictionary: vectorFromArray(names, new Utf8()),
}))

function writePart(table, part, parts, columns) {
  const name = parts > 1 ? `${table}_${part}.parquet` : `${table}.parquet`
  const props = new WriterPropertiesBuilder()
    .setCompression(Compression[codec])
    .setMaxRowGroupSize(rowGroupRows)
    .build()
  const wasm = WasmTable.fromIPCStream(tableToIPC(new Table(columns), 'stream'))
  fs.writeFileSync(path.join(out, name), writeParquet(wasm, props))
}

const engines = ['Tensor', 'Vector', 'Scalar', 'GpSimd', 'Sync']
const engineWeights = [0.3, 0.3, 0.2, 0.15, 0.05]
const opcodes = Array.from({ length: 80 }, (_, i) => `OPCODE_${i}_${'TENSOR_'.repeat(i % 3)}`)
const operands = Array.from({ length: 2000 }, (_, i) =>
  `src=sb[${i % 128}][${(i * 7) % 512}:${(i * 7) % 512 + 64}] dst=psum[${i % 8}] acc=${i % 2}`)
const birIds = Array.from({ length: 5000 }, (_, i) => `bir_${i}`)
const hloNames = Array.from({ length: 500 }, (_, i) => `%fusion.${i} = f32[128,512] fusion()`)

function engineOf() {
  let x = rand()
  for (let e = 0; e < engines.length; e++) {
    if ((x -= engineWeights[e]) < 0) return e
  }
  return engines.length - 1
}

function writeInstructions() {
  const parts = Math.max(1, Math.ceil(instructions / partRows))
  for (let p = 0; p < parts; p++) {
    const from = Math.floor((instructions * p) / parts)
    const n = Math.floor((instructions * (p + 1)) / parts) - from
    const start = new Int64Column(n), end = new Int64Column(n), dur = new Int64Column(n)
    const id = new Int64Column(n), pc = new Int64Column(n), pcore = new Int64Column(n)
    const engine = new Int32Array(n), opcode = new Int32Array(n), operand = new Int32Array(n)
    const bir = new Int32Array(n), hlo = new Int32Array(n)
    for (let i = 0; i < n; i++) {
      const row = from + i
      const e = engineOf()
      const ts = row * kStepNs + Math.floor(rand() * kStepNs)
      const d = 30 + Math.floor(rand() * rand() * 970)
      start.setTime(i, ts)
      end.setTime(i, ts + d)
      dur.set(i, d)
      id.set(i, row)
      pc.set(i, (row * 16) % 1048576)
      engine[i] = e
      opcode[i] = Math.floor(rand() * rand() * opcodes.length)
      operand[i] = Math.floor(rand() * operands.length)
      bir[i] = Math.floor(rand() * birIds.length)
      hlo[i] = Math.floor(row / 997) % hloNames.length
    }
    writePart('Instruction', p, parts, {
      start_ts: makeVector(start.data), end_ts: makeVector(end.data),
      duration_ns: makeVector(dur.data), engine: dictionary(engines, engine),
      timeline_track: dictionary(engines.map((e) => `${e}E`), engine.slice()),
      pcore_idx: makeVector(pcore.data), opcode: dictionary(opcodes, opcode),
      operands: dictionary(operands, operand), id: makeVector(id.data), pc: makeVector(pc.data),
      bir_id: dictionary(birIds, bir), hlo_name: dictionary(hloNames, hlo),
    })
  }
}

const queueTypes = ['data', 'input', 'output', 'instruction']
const queues = Array.from({ length: 16 }, (_, i) => `qSyncIO${i}`)

function writeDma() {
  const parts = Math.max(1, Math.ceil(packets / partRows))
  const step = span / Math.max(packets, 1)
  for (let p = 0; p < parts; p++) {
    const from = Math.floor((packets * p) / parts)
    const n = Math.floor((packets * (p + 1)) / parts) - from
    const cols = ['start', 'end', 'dur', 'id', 'agg', 'engineIdx', 'bytes', 'crc', 'queueIdx',
      'pcore']
    const c = Object.fromEntries(cols.map((k) => [k, new Int64Column(n)]))
    const packetIdx = new Int32Array(n), type = new Int32Array(n), queue = new Int32Array(n)
    const throughput = new Float32Array(n)
    for (let i = 0; i < n; i++) {
      const row = from + i
      const ts = Math.floor(row * step + rand() * step)
      const bytes = 512 * (1 + Math.floor(rand() * 128))
      const d = 20 + Math.floor(bytes / 64)
      const q = Math.floor(rand() * queues.length)
      c.start.setTime(i, ts)
      c.end.setTime(i, ts + d)
      c.dur.set(i, d)
      c.id.set(i, row)
      c.agg.set(i, Math.floor(row / 8))
      c.engineIdx.set(i, q)
      c.bytes.set(i, bytes)
      c.crc.set(i, (row * 2654435761) % 4294967296)
      c.queueIdx.set(i, q)
      packetIdx[i] = row % 8
      type[i] = rand() < 0.9 ? 0 : 1 + Math.floor(rand() * 3)
      queue[i] = q
      throughput[i] = (bytes / d) * 1e9
    }
    writePart('DmaPacket', p, parts, {
      start_ts: makeVector(c.start.data), end_ts: makeVector(c.end.data),
      duration_ns: makeVector(c.dur.data), pcore_idx: makeVector(c.pcore.data),
      id: makeVector(c.id.data), packet_idx: makeVector(packetIdx),
      packet_aggregation_id: makeVector(c.agg.data), engine_idx: makeVector(c.engineIdx.data),
      read_bytes: makeVector(c.bytes.data.slice()), write_bytes: makeVector(c.bytes.data.slice()),
      transfer_bytes: makeVector(c.bytes.data),
      throughput: makeVector(makeData({ type: new Float32(), length: n, data: throughput })),
      queue_type: dictionary(queueTypes, type), queue_name: dictionary(queues, queue),
      queue_idx: makeVector(c.queueIdx.data), crc: makeVector(c.crc.data),
    })
  }
}

fs.rmSync(out, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })
writeTable(out, 'Metadata', schema.Metadata, {
  profile_schema_version: ['7.4.0'], first_hw_timestamp: [kBase],
  last_hw_timestamp: [kBase + BigInt(span)], num_physical_cores: [1], neuroncore_idx: [0],
  instance_type: ['trn1.32xlarge'], dma_ddr_bandwidth: [100e9], hbm_ddr_bandwidth: [820e9],
  num_dma_engines_per_neuroncore: [16],
})
const slice = span / executions
writeTable(out, 'ExecutionInfo', schema.ExecutionInfo, {
  execution_index: Array.from({ length: executions }, (_, i) => i),
  neff_name: Array.from({ length: executions }, () => 'model.neff'),
  // Relative to the profile's start, as the schema describes ExecutionInfo's times.
  execution_start_ts: Array.from({ length: executions }, (_, i) => Math.floor(i * slice)),
  execution_end_ts: Array.from({ length: executions }, (_, i) => Math.floor((i + 1) * slice) + 1000),
})
writeInstructions()
writeDma()
writeSchemaFields(out, schema)
let bytes = 0
for (const f of fs.readdirSync(out)) bytes += fs.statSync(path.join(out, f)).size
console.log(bytes)
