// The canonical JSON form of Parquet files through hyparquet (with hyparquet-compressors), an
// independent pure-JavaScript reader: the oracle of parquet_conformance_test. The same form as
// canonical_json.h writes through opscope's reader; docs/parquet.md ("Conformance") defines it.
//
//   node canonical_dump.mjs OUT_DIR FILE...
//
// Writes OUT_DIR/<file name>.json for each file read, or OUT_DIR/<file name>.error holding the
// reason hyparquet refused it.
//
// Where hyparquet's natural output differs from the canonical form, this script asks it for the
// physical values instead: the schema's converted and logical types are removed before reading
// (no dates, decimals as floats, strings, or maps as objects keyed by strings: the raw INT32,
// INT64, bytes, and the key/value groups as stored), byte arrays stay bytes (utf8: false), and
// INT96 timestamps come as nanoseconds (a BigInt) instead of a Date.
import fs from 'node:fs'
import path from 'node:path'
import { parquetMetadata, parquetRead } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

function number(v) {
  if (Number.isNaN(v)) return '"NaN"'
  if (v === Infinity) return '"Infinity"'
  if (v === -Infinity) return '"-Infinity"'
  if (Object.is(v, -0)) return '"-0"'
  return String(v)
}

function value(v) {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'number') return number(v)
  if (typeof v === 'bigint') return '"' + v.toString() + '"'
  if (v instanceof Uint8Array) {
    return '"' + Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex') + '"'
  }
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return '[' + Array.from(v, value).join(',') + ']'
  if (typeof v === 'object') {
    return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + value(x)).join(',') + '}'
  }
  throw new Error('unexpected value of type ' + typeof v)
}

// The first line: the schema's leaf columns with their dotted paths, types and levels, walked
// from the footer's flattened depth-first schema.
function header(name, metadata) {
  const columns = []
  let next = 1
  function walk(prefix, def, rep) {
    const e = metadata.schema[next++]
    const p = prefix ? prefix + '.' + e.name : e.name
    const d = def + (e.repetition_type !== 'REQUIRED' ? 1 : 0)
    const r = rep + (e.repetition_type === 'REPEATED' ? 1 : 0)
    if (e.num_children) {
      for (let i = 0; i < e.num_children; i++) walk(p, d, r)
      return
    }
    const c = { path: p, type: e.type }
    if (e.type === 'FIXED_LEN_BYTE_ARRAY') c.type_length = e.type_length
    c.converted = e.converted_type ?? null
    c.logical = e.logical_type?.type ?? null
    c.max_def = d
    c.max_rep = r
    columns.push(c)
  }
  for (let i = 0; i < (metadata.schema[0].num_children ?? 0); i++) walk('', 0, 0)
  return JSON.stringify({ file: name, rows: Number(metadata.num_rows), columns }) + '\n'
}

async function dump(file) {
  const buf = fs.readFileSync(file)
  const bytes = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const metadata = parquetMetadata(bytes, { geoparquet: false })
  let out = header(path.basename(file), metadata)
  for (const e of metadata.schema) {
    delete e.converted_type
    delete e.logical_type
  }
  const rows = []
  await parquetRead({
    file: bytes,
    metadata,
    compressors,
    utf8: false,
    rowFormat: 'object',
    parsers: { timestampFromNanoseconds: n => n },
    onComplete: r => rows.push(...r),
  })
  for (const r of rows) out += value(r) + '\n'
  return out
}

const [outDir, ...files] = process.argv.slice(2)
for (const file of files) {
  const base = path.join(outDir, path.basename(file))
  try {
    fs.writeFileSync(base + '.json', await dump(file))
  } catch (e) {
    fs.writeFileSync(base + '.error', String(e?.message ?? e))
  }
}
