/// ONNX tensors as tessel tensors: the element types tessel computes with, and the values of a
/// TensorProto (initializers, Constant nodes) in either of ONNX's encodings (raw little-endian
/// bytes or the typed repeated fields), checked against their declared shape so that a
/// damaged or inconsistent initializer is an error naming it rather than a wrong weight.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>

#include "runtime/Tensor.h"

namespace tessel::graph::onnx_import {

/// The tessel dtype of an ONNX element type (TensorProto::DataType); Error naming `what` for
/// the types tessel does not compute with (strings, float16, complex, ...).
DataType dtypeOf(int32_t onnxType, const std::string& what);
/// The ONNX name of an element type ("FLOAT", "INT64"), or its number.
std::string onnxTypeName(int32_t onnxType);

/// The values of a tensor proto on the host; `what` names it in errors ("initializer 'w'").
runtime::Tensor tensorFromProto(const onnx::TensorProto& proto, const std::string& what);

}  // namespace tessel::graph::onnx_import
