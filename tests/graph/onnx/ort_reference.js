#!/usr/bin/env node
// Runs ONNX models with ONNX Runtime (npm onnxruntime-node, CPU) and writes their outputs.
//
//   node ort_reference.js MODEL_DIR...   each MODEL_DIR holds model.onnx and input_NAME.npy;
//                                         writes output_K.npy for the K-th graph output
//   node ort_reference.js --model M.onnx --input NAME=x.npy... --output y.npy...
//
// onnxruntime-node is found through NODE_PATH (bench/peers/install.sh installs it).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { readNpy, writeNpy } = require('./npy.js');

async function run(model, inputs, outputs) {
  // No graph optimizations: the reference is ONNX's definition, computed operator by operator.
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1 });
  const feeds = {};
  for (const [name, file] of Object.entries(inputs)) {
    const { shape, data, type } = readNpy(file);
    feeds[name] = new ort.Tensor(type, data, shape);
  }
  const result = await session.run(feeds);
  session.outputNames.forEach((name, k) => {
    if (k < outputs.length) writeNpy(outputs[k], result[name].dims, result[name].data);
  });
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--model') {
    const inputs = {}, outputs = [];
    for (let i = 2; i < args.length; i += 2) {
      if (args[i] === '--input') {
        const [name, file] = args[i + 1].split('=');
        inputs[name] = file;
      } else if (args[i] === '--output') outputs.push(args[i + 1]);
      else throw new Error('unknown argument ' + args[i]);
    }
    await run(args[1], inputs, outputs);
    return;
  }
  for (const dir of args) {
    const inputs = {};
    for (const f of fs.readdirSync(dir)) {
      const m = f.match(/^input_(.*)\.npy$/);
      if (m) inputs[m[1]] = path.join(dir, f);
    }
    const outputs = [0, 1, 2, 3, 4, 5, 6, 7].map((k) => path.join(dir, `output_${k}.npy`));
    await run(path.join(dir, 'model.onnx'), inputs, outputs);
  }
}

main().catch((e) => {
  console.error('ort_reference.js: ' + e.message);
  process.exit(1);
});
