// Writes a Neuron Explorer output directory from a JSON description, with the documented schema's
// field types (neuron_tables.mjs), for the Neuron reader's tests.
//
//   node write_profile.mjs SCHEMA_REFERENCE.md SPEC.json OUT_DIR
//
// SPEC: { "tables": { "Instruction": { "columns": { "start_ts": [...], ... }, "parts": 2,
//          "row_group_rows": 4, "codec": "ZSTD", "omit": ["opcode"] }, ... },
//         "schema_fields": { "drop": ["Instruction.engine"], "add": [{ "table", "field", "type" }] }
//           (false: no SchemaFields table),
//         "truncate": { "file": "Instruction_1.parquet", "keep_bytes": 100 } }
// Metadata.profile_schema_version defaults to "7.4.0", the documented version.
import fs from 'node:fs'
import path from 'node:path'
import { readDocumentedSchema, writeSchemaFields, writeTable } from './neuron_tables.mjs'

const [reference, specPath, out] = process.argv.slice(2)
const schema = readDocumentedSchema(reference)
const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'))
fs.rmSync(out, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })
for (const [name, t] of Object.entries(spec.tables ?? {})) {
  const columns = { ...(t.columns ?? {}) }
  if (name === 'Metadata' && columns.profile_schema_version === undefined) {
    columns.profile_schema_version = ['7.4.0']
  }
  // omit: documented fields left out of the file (tests of missing fields).
  const fields = (schema[name] ?? []).filter((f) => !(t.omit ?? []).includes(f.name))
  writeTable(out, name, fields, columns, {
    parts: t.parts ?? 1, rowGroupRows: t.row_group_rows ?? 1 << 20, codec: t.codec ?? 'SNAPPY',
    rows: t.rows,
  })
}
if (spec.schema_fields !== false) writeSchemaFields(out, schema, spec.schema_fields ?? {})
if (spec.truncate) {
  const file = path.join(out, spec.truncate.file)
  fs.truncateSync(file, spec.truncate.keep_bytes)
}
