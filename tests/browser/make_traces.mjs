// Writes the traces the browser tests open besides the fixtures (tools/run_browser_tests.sh):
//   node make_traces.mjs epoch SRC DST    a copy of SRC (.json or .json.gz) with every "ts" moved
//                                         to ~1.67e15 us (1.67e18 ns, past a double's 2^53) and
//                                         given a sub-microsecond part, exactly (BigInt on text)
//   node make_traces.mjs names DST        a small CUDA-style trace whose names test shortening,
//                                         search and the chain: two cutlass GEMMs that differ only
//                                         in their template argument, "<built-in function launch>"
//                                         at the bottom of a 45-frame Python stack, several
//                                         instances of one kernel of different durations, a DtoH
//                                         copy, two steps, and one thread with runtime lanes to
//                                         two places (titles that differ only at their end)
//   node make_traces.mjs shift SRC DST    SRC's trace files (a job's folder) copied to DST at
//                                         epoch times, each rank's clock offset kept
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

// Where `epoch` moves the first event: 1,670,000,000,000,000.357 us.
const TARGET_NS = 1670000000000000357n;

function read(file) {
  const bytes = fs.readFileSync(file);
  return (file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8');
}

function write(file, text) {
  fs.mkdirSync(path.dirname(file), {recursive: true});
  fs.writeFileSync(file, file.endsWith('.gz') ? zlib.gzipSync(text) : text);
}

// A JSON number of microseconds as exact integer nanoseconds (at most 3 decimals), and back.
function usToNs(text) {
  const m = /^(-?)(\d+)(?:\.(\d{1,3}))?$/.exec(text);
  if (!m) throw new Error(`not a plain microsecond time: ${text}`);
  const ns = BigInt(m[2]) * 1000n + BigInt((m[3] || '').padEnd(3, '0'));
  return m[1] ? -ns : ns;
}

function nsToUs(ns) {
  const sign = ns < 0n ? '-' : '';
  const a = ns < 0n ? -ns : ns;
  return `${sign}${a / 1000n}.${String(a % 1000n).padStart(3, '0')}`;
}

const TS = /("ts"\s*:\s*)(-?\d+(?:\.\d+)?)/g;

// Every "ts" of the text moved by the same amount, so that the earliest lands on TARGET_NS.
function shiftText(text, by = null) {
  let first = null;
  for (const m of text.matchAll(TS)) {
    const ns = usToNs(m[2]);
    if (first === null || ns < first) first = ns;
  }
  const delta = by !== null ? by : TARGET_NS - first;
  return {text: text.replace(TS, (all, key, value) => key + nsToUs(usToNs(value) + delta)), delta};
}

function epoch(src, dst) {
  write(dst, shiftText(read(src)).text);
}

// A trace's "baseTimeNanoseconds" (BigInt; 0 when it has none) and its text without it: moved
// into every "ts", the times are epoch times as most profilers write them.
function withoutBase(text) {
  const m = /"baseTimeNanoseconds"\s*:\s*(\d+)\s*,?/.exec(text);
  return m ? {base: BigInt(m[1]), text: text.replace(m[0], '')} : {base: 0n, text};
}

// Every trace file under `src` (a job's rank files, in any folders) copied to the same place under
// `dst`, its base time moved into its "ts" and every file moved by one more amount, so that the
// earliest event of the first file lands on TARGET_NS: each rank's clock keeps its offset.
function shiftDir(src, dst) {
  const files = fs.readdirSync(src, {recursive: true}).map(String).filter((f) => /\.json(\.gz)?$/.test(f)).sort();
  let common = null;
  for (const rel of files) {
    const {base, text} = withoutBase(read(path.join(src, rel)));
    if (common === null) {
      let first = null;
      for (const m of text.matchAll(TS)) {
        const ns = usToNs(m[2]);
        if (first === null || ns < first) first = ns;
      }
      common = TARGET_NS - (base + first);
    }
    write(path.join(dst, rel), shiftText(text, base + common).text);
  }
}

const GEMM_A = 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_16x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x256_16x3_nn_align4::Params)';
const GEMM_B = 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4::Params)';
const SOFTMAX = 'void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)';
const DTOH = 'Memcpy DtoH (Device -> Pageable)';
const LAUNCH = '<built-in function launch>';
const SOFTMAX_US = [3, 9, 4, 12, 6];  // durations of the softmax kernel's instances

// The names trace: times in us from 1000, one host thread (pid 100) and GPU 0 stream 7.
function names(dst) {
  const ev = [];
  const host = {pid: 100, tid: 100};
  const gpu = {pid: 0, tid: 7};
  ev.push({ph: 'M', name: 'process_name', pid: 100, args: {name: 'python3'}});
  ev.push({ph: 'M', name: 'thread_name', pid: 100, tid: 100, args: {name: 'trainer main loop of the names test'}});
  ev.push({ph: 'M', name: 'process_name', pid: 0, args: {name: 'GPU 0'}});
  ev.push({ph: 'M', name: 'process_labels', pid: 0, args: {labels: 'GPU 0'}});
  const x = (at, name, cat, ts, dur, args) => ev.push({ph: 'X', cat, name, ...at, ts, dur, args});
  let corr = 100;
  let ext = 1;
  // A launch: op -> runtime -> kernel, linked by External id and correlation.
  const launch = (op, kernel, ts, kernelTs, kernelUs, cat = 'kernel', runtime = 'cudaLaunchKernel') => {
    const id = ext++;
    const c = corr++;
    x(host, op, 'cpu_op', ts, 20, {'External id': id});
    x(host, runtime, 'cuda_runtime', ts + 5, 8, {'External id': id, correlation: c});
    x(gpu, kernel, cat, kernelTs, kernelUs, {'External id': id, correlation: c, device: 0, stream: 7});
  };
  x(host, 'ProfilerStep#1', 'user_annotation', 1000, 900, {});
  x(host, 'ProfilerStep#2', 'user_annotation', 2000, 900, {});
  // Step 1: 45 nested Python frames, the innermost a built-in, then the two GEMMs under it.
  const depth = 45;
  for (let i = 0; i < depth; i++) {
    const name = i === depth - 1 ? LAUNCH : `model.py(${10 + i}): forward_${i}`;
    x(host, name, 'python_function', 1010 + i, 400 - 2 * i, {'Python id': i + 1, 'Python parent id': i});
  }
  launch('aten::mm', GEMM_A, 1100, 1130, 40);
  launch('aten::mm', GEMM_B, 1200, 1230, 25);
  // A runtime call with no device activity: the thread's second runtime lane.
  x(host, 'cudaGetDevice', 'cuda_runtime', 1300, 2, {});
  // Step 2: softmax instances of different durations, and a copy back to the host.
  SOFTMAX_US.forEach((us, i) => launch('aten::_softmax', SOFTMAX, 2010 + 100 * i, 2040 + 100 * i, us));
  launch('aten::copy_', DTOH, 2600, 2630, 7, 'gpu_memcpy', 'cudaMemcpyAsync');
  // Rank 0, as the fixture it is served beside: the folder is not one job.
  const trace = {schemaVersion: 1, distributedInfo: {rank: 0}, deviceProperties: [{id: 0, name: 'NVIDIA H100'}], traceEvents: ev};
  write(dst, JSON.stringify(trace, null, 0));
}

const [mode, a, b] = process.argv.slice(2);
if (mode === 'epoch') epoch(a, b);
else if (mode === 'names') names(a);
else if (mode === 'shift') shiftDir(a, b);
else {
  console.error('usage: node make_traces.mjs epoch SRC DST | names DST | shift SRC_DIR DST_DIR');
  process.exit(2);
}
