// Reading float32 and int64 .npy files and writing float32 ones (little-endian, C order), the
// format tessel run reads and writes; enough for the ONNX tests' inputs (images, token ids) and
// outputs.
'use strict';
const fs = require('fs');

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not a .npy file');
  const major = buf[6];
  const headerLength = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLength;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = header.match(/'descr':\s*'([^']*)'/);
  const types = { '<f4': 'float32', '<i8': 'int64' };
  if (!descr || !types[descr[1]]) throw new Error(file + ': only float32 and int64 are read here: ' + header);
  const type = types[descr[1]];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(file + ': Fortran order');
  const shapeText = header.match(/'shape':\s*\(([^)]*)\)/)[1];
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const data = type === 'int64' ? new BigInt64Array(count) : new Float32Array(count);
  for (let i = 0; i < count; i++)
    data[i] = type === 'int64' ? buf.readBigInt64LE(start + 8 * i) : buf.readFloatLE(start + 4 * i);
  return { shape, data, type };
}

function writeNpy(file, shape, data) {
  const dims = shape.length === 1 ? shape[0] + ',' : shape.join(', ');
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims}), }`;
  // The header is padded with spaces so that the data starts on a multiple of 64 bytes.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const out = Buffer.alloc(total + 4 * data.length);
  out.write('\x93NUMPY', 0, 'latin1');
  out[6] = 1;
  out[7] = 0;
  out.writeUInt16LE(header.length, 8);
  out.write(header, 10, 'latin1');
  for (let i = 0; i < data.length; i++) out.writeFloatLE(data[i], total + 4 * i);
  fs.writeFileSync(file, out);
}

// The largest |a - b| relative to the reference's largest magnitude, and the worst element.
function compare(actual, expected) {
  if (actual.data.length !== expected.data.length || actual.shape.join() !== expected.shape.join())
    return { ok: false, why: `shape [${actual.shape}] vs [${expected.shape}]` };
  let scale = 0;
  for (const v of expected.data) scale = Math.max(scale, Math.abs(v));
  let worst = 0, at = 0;
  for (let i = 0; i < actual.data.length; i++) {
    const d = Math.abs(actual.data[i] - expected.data[i]);
    if (!(d <= worst)) { worst = d; at = i; }
  }
  return { ok: true, relative: scale > 0 ? worst / scale : worst, at, scale };
}

module.exports = { readNpy, writeNpy, compare };
