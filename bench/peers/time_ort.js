#!/usr/bin/env node
// Times an ONNX model with ONNX Runtime (npm onnxruntime-node) on the CPU.
//
//   node time_ort.js MODEL_DIR [--name NAME] [--threads 2] [--runs N] [--warmup N]
//                              [--min-seconds S] [--profile]
//
// MODEL_DIR is a directory written by export_models.py (model.onnx, input.npy and, to check
// the result, output.npy); a path to a .onnx file also works (random input, no check).
// Session: CPU execution provider, all graph optimizations, sequential execution,
// --threads intra-op threads (default 2), one inter-op thread.
// Timing: warm-up runs, then timed runs of session.run (input already in memory); prints
//   BENCH <name>_ort_ms <median> ms
// and a '#' line with min / mean / p90 / run count. --profile: then, in a second session with
// ONNX Runtime's profiler on (so that its overhead stays out of the timing), 50 runs, and each
// node's median kernel time in µs in graph order, to set beside `tessel benchmark --profile`.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function usage(msg) {
  if (msg) console.error('time_ort.js: ' + msg);
  console.error('usage: node time_ort.js MODEL_DIR|MODEL.onnx [--name NAME] [--threads N] ' +
                '[--runs N] [--warmup N] [--min-seconds S] [--no-spin] [--profile]');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { threads: 2, runs: 0, warmup: 5, minSeconds: 2.0, name: null, target: null,
              spin: true, profile: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(k + ' needs a value');
      return argv[++i];
    };
    const num = (v, min) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < min) usage(`${k} wants a number >= ${min}, got '${v}'`);
      return n;
    };
    if (k === '--threads') a.threads = num(val(), 1);
    else if (k === '--runs') a.runs = num(val(), 1);
    else if (k === '--warmup') a.warmup = num(val(), 0);
    else if (k === '--min-seconds') a.minSeconds = num(val(), 0);
    else if (k === '--name') a.name = val();
    else if (k === '--no-spin') a.spin = false;
    else if (k === '--profile') a.profile = true;
    else if (k === '-h' || k === '--help') usage();
    else if (k.startsWith('-')) usage('unknown option ' + k);
    else if (a.target === null) a.target = k;
    else usage('more than one model given');
  }
  if (a.target === null) usage('no model given');
  return a;
}

// Reads a little-endian float32 or int64 C-order .npy file (what export_models.py writes:
// images as float32, token ids as int64); returns { data, dims, type } for an ort.Tensor.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 1, 6) !== 'NUMPY') {
    throw new Error(file + ': not a .npy file');
  }
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) throw new Error(file + ': bad .npy header ' + header);
  const types = { '<f4': ['float32', 4], '<i8': ['int64', 8] };
  if (!types[descr[1]]) {
    throw new Error(file + `: dtype ${descr[1]}, want <f4 (float32) or <i8 (int64)`);
  }
  const [type, size] = types[descr[1]];
  if (order[1] !== 'False') throw new Error(file + ': Fortran order is not supported');
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const n = dims.reduce((x, y) => x * y, 1);
  const off = hstart + hlen;
  if (buf.length - off !== size * n) {
    throw new Error(file + `: ${buf.length - off} data bytes, shape ${dims} wants ${size * n}`);
  }
  const data = type === 'int64' ? new BigInt64Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) {
    data[i] = type === 'int64' ? buf.readBigInt64LE(off + 8 * i) : buf.readFloatLE(off + 4 * i);
  }
  return { data, dims, type };
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let modelFile = a.target;
  let dir = null;
  if (fs.existsSync(a.target) && fs.statSync(a.target).isDirectory()) {
    dir = a.target;
    modelFile = path.join(dir, 'model.onnx');
  }
  if (!fs.existsSync(modelFile)) usage(modelFile + ' does not exist');
  const name = a.name || (dir ? path.basename(path.resolve(dir))
                              : path.basename(modelFile, '.onnx'));

  const options = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    // --no-spin: idle pool threads sleep instead of spinning (for a busy machine).
    extra: a.spin ? {} : { session: { intra_op: { allow_spinning: '0' } } },
  };
  const session = await ort.InferenceSession.create(modelFile, options);
  const inName = session.inputNames[0];
  const outName = session.outputNames[0];

  let input;
  if (dir && fs.existsSync(path.join(dir, 'input.npy'))) {
    const x = readNpy(path.join(dir, 'input.npy'));
    input = new ort.Tensor(x.type, x.data, x.dims);
  } else {
    const meta = session.inputMetadata ? session.inputMetadata[0] : null;
    const dims = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' ? d : 1))
                                    : [1, 3, 224, 224];
    const n = dims.reduce((x, y) => x * y, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = Math.sin(i * 0.37);
    input = new ort.Tensor('float32', data, dims);
  }
  const feeds = { [inName]: input };

  // Correctness check against the torch reference, so that a wrong export is not timed.
  const first = await session.run(feeds);
  if (dir && fs.existsSync(path.join(dir, 'output.npy'))) {
    const ref = readNpy(path.join(dir, 'output.npy'));
    const got = first[outName].data;
    if (got.length !== ref.data.length) {
      throw new Error(`${name}: output has ${got.length} values, reference ${ref.data.length}`);
    }
    let maxAbs = 0, maxRef = 0;
    for (let i = 0; i < got.length; i++) {
      maxAbs = Math.max(maxAbs, Math.abs(got[i] - ref.data[i]));
      maxRef = Math.max(maxRef, Math.abs(ref.data[i]));
    }
    const rel = maxAbs / Math.max(maxRef, 1e-30);
    console.log(`# ort ${name}: output vs torch reference: max abs diff ${maxAbs.toExponential(2)}` +
                ` (relative to max ${rel.toExponential(2)})`);
    if (!(rel < 1e-3)) {
      console.error(`time_ort.js: ${name}: output differs from the reference (relative ${rel})`);
      process.exitCode = 1;
    }
  }

  for (let i = 0; i < a.warmup; i++) await session.run(feeds);
  const times = [];
  const start = process.hrtime.bigint();
  for (;;) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    if (a.runs > 0 ? times.length >= a.runs
                   : (times.length >= 10 && elapsed >= a.minSeconds) || times.length >= 1000) {
      break;
    }
  }
  const s = [...times].sort((x, y) => x - y);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))];
  const median = s.length % 2 ? s[(s.length - 1) / 2]
                              : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  const mean = times.reduce((x, y) => x + y, 0) / times.length;
  console.log(`# ort ${name}: ${times.length} runs, ${a.threads} intra-op threads: ` +
              `median ${median.toFixed(3)} min ${s[0].toFixed(3)} mean ${mean.toFixed(3)} ` +
              `p90 ${q(0.9).toFixed(3)} ms (onnxruntime-node ${ort.env.versions ? ort.env.versions.common : ''}` +
              `${a.spin ? '' : ', no spinning'})`);
  console.log(`BENCH ${name}_ort_ms ${median.toFixed(3)} ms`);
  if (session.release) await session.release();
  if (a.profile) await profileNodes(modelFile, options, feeds, name);
}

// ONNX Runtime's per-node profile: its profiler writes one JSON file of events; each node's
// '<node>_kernel_time' events give its time per run.
async function profileNodes(modelFile, options, feeds, name) {
  const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'ort-profile-'));
  const session = await ort.InferenceSession.create(modelFile,
      { ...options, enableProfiling: true, profileFilePrefix: path.join(dir, 'profile') });
  for (let i = 0; i < 50; i++) await session.run(feeds);
  session.endProfiling();
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (files.length !== 1) throw new Error(`${dir}: expected one profile file, found ${files.length}`);
  const events = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });
  const nodes = new Map();  // in the order they first ran
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const node = e.name.slice(0, -'_kernel_time'.length);
    if (!nodes.has(node)) nodes.set(node, { op: (e.args && e.args.op_name) || '', us: [] });
    nodes.get(node).us.push(e.dur);
  }
  let total = 0;
  console.log(`# ort ${name}: per-node median kernel time over 50 profiled runs`);
  for (const [node, n] of nodes) {
    const s = n.us.sort((x, y) => x - y);
    const median = s[Math.floor(s.length / 2)];
    total += median;
    console.log(`#   ${node.padEnd(56)} ${n.op.padEnd(22)} ${String(median).padStart(7)} us`);
  }
  console.log(`#   sum of the medians ${(total / 1000).toFixed(3)} ms`);
  if (session.release) await session.release();
}

main().catch((e) => {
  console.error('time_ort.js: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
