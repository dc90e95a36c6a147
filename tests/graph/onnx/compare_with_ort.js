#!/usr/bin/env node
// Compares tessel's outputs with ONNX Runtime's on the same inputs.
//
//   node compare_with_ort.js MODEL.onnx INPUT_NAME=in.npy TESSEL_OUT.npy [FLOOR]
//
// ONNX Runtime runs the model twice: operator by operator (no graph optimizations: the
// reference) and with all its optimizations (fused convolutions, other summation orders). Both
// are float32, and deep models differ from themselves by that much; tessel must be within
// FLOOR (default 1e-4) of the output's largest magnitude, or within 1.5x of ONNX Runtime's own
// difference where that is larger. Prints the figures; exit status 1 when tessel is further off.
'use strict';
const ort = require('onnxruntime-node');
const { readNpy, compare } = require('./npy.js');

async function runOrt(model, name, input, level) {
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: level, intraOpNumThreads: 1 });
  const result = await session.run({ [name]: new ort.Tensor(input.type, input.data, input.shape) });
  const out = result[session.outputNames[0]];
  return { shape: out.dims.map(Number), data: out.data };
}

async function main() {
  const [model, feed, tesselFile, floorText] = process.argv.slice(2);
  const floor = floorText === undefined ? 1e-4 : Number(floorText);
  if (!(floor > 0)) throw new Error(`FLOOR '${floorText}' is not a positive number`);
  const [name, inputFile] = feed.split('=');
  const input = readNpy(inputFile);
  const reference = await runOrt(model, name, input, 'disabled');
  const optimized = await runOrt(model, name, input, 'all');
  const tessel = compare(readNpy(tesselFile), reference);
  const self = compare(optimized, reference);
  if (!tessel.ok) throw new Error('tessel output: ' + tessel.why);
  const tolerance = Math.max(floor, 1.5 * self.relative);
  console.log(`${model}: tessel vs ONNX Runtime ${tessel.relative.toExponential(2)} of the output scale ` +
              `${tessel.scale.toPrecision(4)}; ONNX Runtime optimized vs not ${self.relative.toExponential(2)}; ` +
              `tolerance ${tolerance.toExponential(2)}`);
  if (!(tessel.relative <= tolerance)) {
    console.error(`FAIL: element ${tessel.at} differs by ${tessel.relative.toExponential(2)} of the scale`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error('compare_with_ort.js: ' + e.message);
  process.exit(1);
});
