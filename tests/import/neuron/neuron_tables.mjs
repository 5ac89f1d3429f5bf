// Neuron Explorer profile tables written with parquet-wasm (the Rust parquet crate compiled to
// WebAssembly), a Parquet writer independent of opscope's reader. Field types come from the
// documented schema (the shared reference, neuron-explorer-parquet-schema-7.4.0.md), parsed here,
// never from opscope's code.
//
//   const schema = readDocumentedSchema(referencePath)
//   writeTable(dir, 'Instruction', schema.Instruction, columns, { parts: 2, rowGroupRows: 1000 })
//
// A column is given as an array of values (null for absent), or as { type, values } to override
// the documented type (tests of wrong types), or as { dictionary: [...], indices: Int32Array } for
// large string columns (the benchmark).
import fs from 'node:fs'
import path from 'node:path'
import { Bool, Dictionary, Field, Float32, Float64, Int32, Int64, List, Table, Utf8, makeData,
  makeVector, tableToIPC, vectorFromArray } from 'apache-arrow'
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet }
  from 'parquet-wasm'

// { Table: [{ name, type, required }] } from the reference's "| `field` | type | unit | required |"
// rows. type: int64, int32, float, double, string, boolean, list<int64>, list<string>, or null for
// the transient types the reference lists (never written to Parquet).
export function readDocumentedSchema(referencePath) {
  const tables = {}
  let current = null
  for (const line of fs.readFileSync(referencePath, 'utf8').split('\n')) {
    const heading = line.match(/^## (\w+)\s*$/)
    if (heading) {
      current = heading[1] === 'Enums' ? null : (tables[heading[1]] = [])
      continue
    }
    const row = line.match(/^\| `(\w+)` \| ([^|]*)\|[^|]*\| (Yes|No) \|/)
    if (current && row) {
      current.push({ name: row[1], type: documentedType(row[2].trim()), required: row[3] === 'Yes' })
    }
  }
  return tables
}

function documentedType(text) {
  if (text === 'integer (int64)') return 'int64'
  if (text === 'integer (int32)') return 'int32'
  if (text === 'number (float)') return 'float'
  if (text === 'number (double)') return 'double'
  if (text === 'boolean') return 'boolean'
  if (text.startsWith('string')) return 'string'
  if (text === 'array of integer (int64)') return 'list<int64>'
  if (text === 'array of string') return 'list<string>'
  return null
}

function arrowType(type) {
  switch (type) {
    case 'int64': return new Int64()
    case 'int32': return new Int32()
    case 'float': return new Float32()
    case 'double': return new Float64()
    case 'boolean': return new Bool()
    case 'string': return new Utf8()
    case 'list<int64>': return new List(new Field('element', new Int64(), true))
    case 'list<string>': return new List(new Field('element', new Utf8(), true))
    default: throw new Error(`no Arrow type for '${type}'`)
  }
}

function toArrow(type, v) {
  if (v === null || v === undefined) return null
  if (type === 'int64') return BigInt(v)
  if (type === 'list<int64>') return v.map((x) => (x === null ? null : BigInt(x)))
  return v
}

// One Arrow vector for `values` (an array, a typed array, or a dictionary column) of `type`.
function vector(type, values, from, to) {
  if (values.dictionary) {
    return makeVector(makeData({
      type: new Dictionary(new Utf8(), new Int32()), length: to - from,
      data: values.indices.subarray(from, to),
      dictionary: vectorFromArray(values.dictionary, new Utf8()),
    }))
  }
  if (ArrayBuffer.isView(values)) return makeVector(values.subarray(from, to))
  return vectorFromArray(values.slice(from, to).map((v) => toArrow(type, v)), arrowType(type))
}

function rowCount(values) {
  return values.dictionary ? values.indices.length : values.length
}

// Writes table `name` into `dir`: `<name>.parquet`, or with parts > 1 `<name>_0.parquet`, ...
// `fields`: the documented fields (readDocumentedSchema); `columns`: { field: values } (fields not
// documented need { type, values }). Required documented fields not given are filled with zeros,
// empty strings and false, as a writer that always writes them would.
export function writeTable(dir, name, fields, columns, options = {}) {
  const { parts = 1, rowGroupRows = 1 << 20, codec = 'SNAPPY' } = options
  // A column: an array or typed array of values, a dictionary column, or { type, values }.
  const valuesOf = (c) => (Array.isArray(c) || ArrayBuffer.isView(c) || c.dictionary ? c : c.values)
  const given = Object.entries(columns)
  const rows = given.length ? rowCount(valuesOf(given[0][1])) : options.rows ?? 1
  const specs = []
  for (const f of fields ?? []) {
    if (f.type === null) continue
    if (columns[f.name] !== undefined) {
      const c = columns[f.name]
      specs.push({ name: f.name, type: c.type ?? f.type, values: valuesOf(c) })
    } else if (f.required) {
      const zero = { string: '', boolean: false, 'list<int64>': [], 'list<string>': [] }
      specs.push({ name: f.name, type: f.type, values: new Array(rows).fill(zero[f.type] ?? 0) })
    }
  }
  for (const [field, c] of given) {
    if (!(fields ?? []).some((f) => f.name === field)) {
      specs.push({ name: field, type: c.type, values: valuesOf(c) })
    }
  }
  fs.mkdirSync(dir, { recursive: true })
  for (let p = 0; p < parts; p++) {
    const from = Math.floor((rows * p) / parts)
    const to = Math.floor((rows * (p + 1)) / parts)
    const cols = {}
    for (const s of specs) {
      if (rowCount(s.values) !== rows) throw new Error(`${name}.${s.name}: not ${rows} values`)
      cols[s.name] = vector(s.type, s.values, from, to)
    }
    const props = new WriterPropertiesBuilder()
      .setCompression(Compression[codec])
      .setMaxRowGroupSize(rowGroupRows)
      .build()
    const file = path.join(dir, parts > 1 ? `${name}_${p}.parquet` : `${name}.parquet`)
    const wasm = WasmTable.fromIPCStream(tableToIPC(new Table(cols), 'stream'))
    fs.writeFileSync(file, writeParquet(wasm, props))
  }
}

// The profile's own SchemaFields table: one row per documented (table, field), the way Neuron
// Explorer lists its schema, minus `drop` ("Table.field") plus `add` ([{table, field, type}]).
export function writeSchemaFields(dir, schema, { drop = [], add = [] } = {}) {
  const rows = []
  for (const [table, fields] of Object.entries(schema)) {
    for (const f of fields) {
      if (f.type !== null && !drop.includes(`${table}.${f.name}`)) {
        rows.push({ table, field: f.name, type: f.type, required: f.required })
      }
    }
  }
  for (const a of add) rows.push({ required: false, ...a })
  const typeName = (t) => ({ int64: 'integer', int32: 'integer', float: 'number', double: 'number',
    string: 'string', boolean: 'boolean' }[t] ?? 'array')
  const format = (t) => ({ int64: 'int64', int32: 'int32', float: 'float', double: 'double' }[t]
    ?? null)
  writeTable(dir, 'SchemaFields', schema.SchemaFields, {
    table_name: rows.map((r) => r.table),
    table_description: rows.map(() => ''),
    field_name: rows.map((r) => r.field),
    field_description: rows.map(() => ''),
    field_type: rows.map((r) => typeName(r.type)),
    field_required: rows.map((r) => r.required),
    field_format: rows.map((r) => format(r.type)),
  })
}
