/// ONNX tensors as tessel tensors: the element types tessel computes with, and the values of a
/// TensorProto (initializers, Constant nodes) in any of ONNX's encodings (raw little-endian
/// bytes, the typed repeated fields, or a file beside the model: OnnxExternalData.h), checked
/// against their declared shape so that a damaged or inconsistent initializer is an error
/// naming it rather than a wrong weight.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>

#include "graph/frontends/OnnxExternalData.h"
#include "runtime/Tensor.h"

namespace tessel::graph::onnx_import {

/// The tessel dtype of an ONNX element type (TensorProto::DataType); Error naming `what` for
/// the types tessel does not compute with (strings, float16, complex, ...).
DataType dtypeOf(int32_t onnxType, const std::string& what);
/// The ONNX name of an element type ("FLOAT", "INT64"), or its number.
std::string onnxTypeName(int32_t onnxType);

/// The values of a tensor proto on the host; `what` names it in errors ("initializer 'w'").
/// `external` reads data kept outside the model file.
runtime::Tensor tensorFromProto(const onnx::TensorProto& proto, const std::string& what, ExternalData& external);

}  // namespace tessel::graph::onnx_import
