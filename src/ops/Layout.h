/// Data layouts of 4-D image tensors: NCHW (channels before rows, as torch) and NHWC (channels
/// innermost, as TensorFlow and the auto-scheduler's favourite). Operators that care about the
/// layout take one and read the batch, channel and spatial axes through `LayoutAxes`.
#pragma once
#include <string>

namespace tessel::ops {

enum class Layout { NCHW, NHWC };

/// The positions of the batch, channel, height and width axes in a 4-D tensor of a layout.
struct LayoutAxes {
  int batch, channel, height, width;
};

inline LayoutAxes axesOf(Layout layout) {
  return layout == Layout::NCHW ? LayoutAxes{0, 1, 2, 3} : LayoutAxes{0, 3, 1, 2};
}

inline const char* layoutName(Layout layout) { return layout == Layout::NCHW ? "NCHW" : "NHWC"; }

/// "NCHW" or "NHWC"; throws Error naming the text otherwise.
Layout parseLayout(const std::string& text);

}  // namespace tessel::ops
