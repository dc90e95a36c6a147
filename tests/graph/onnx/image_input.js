#!/usr/bin/env node
// Turns raw 8-bit RGB pixels (ImageMagick's `-depth 8 rgb:FILE`) into a normalized NCHW float32
// .npy: value = (pixel / 255 - mean[c]) / std[c], as PaddleOCR's preprocessing does.
//
//   node image_input.js IN.rgb WIDTH HEIGHT OUT.npy MEAN_R,MEAN_G,MEAN_B STD_R,STD_G,STD_B
'use strict';
const fs = require('fs');
const { writeNpy } = require('./npy.js');

const [input, width, height, output, meanText, stdText] = process.argv.slice(2);
const w = Number(width), h = Number(height);
const mean = meanText.split(',').map(Number), std = stdText.split(',').map(Number);
const pixels = fs.readFileSync(input);
if (pixels.length !== w * h * 3) throw new Error(`${input}: ${pixels.length} bytes, expected ${w * h * 3}`);
const data = new Float32Array(3 * w * h);
for (let c = 0; c < 3; c++)
  for (let i = 0; i < w * h; i++) data[c * w * h + i] = (pixels[3 * i + c] / 255 - mean[c]) / std[c];
writeNpy(output, [1, 3, h, w], data);
