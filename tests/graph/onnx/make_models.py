#!/usr/bin/python3
"""Writes the small ONNX models of tessel's ONNX tests (models/NAME/model.onnx with input_*.npy)
and the damaged ones of the robustness test (bad/*.onnx), with Debian's python3-onnx and numpy.

    /usr/bin/python3 tests/graph/onnx/make_models.py
    NODE_PATH=build/tests/graph/onnx-npm/node_modules node tests/graph/onnx/ort_reference.js tests/graph/onnx/models/*

(the npm packages are there once the onnx_paddle_ocr or onnx_torchvision test ran, or after
`bash tests/graph/onnx/npm_install.sh build/tests/graph/onnx-npm`).

The reference outputs (models/NAME/output_K.npy) come from ONNX Runtime (ort_reference.js), not
from this script: the tests compare tessel with an independent implementation. Every model is
tiny (a few KiB) and the files are committed, so the tests need neither Python nor node.
Deterministic: a fixed seed per model.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
BAD = os.path.join(HERE, "bad")
F = TensorProto.FLOAT


def rng(name):
    """A generator seeded by the name (Python's hash() differs between runs)."""
    return np.random.default_rng(sum((i + 1) * ord(c) for i, c in enumerate(name)))


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def value(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, nodes, inputs, outputs, initializers=(), opset=13, input_data=None, output_shapes=None):
    """output_shapes: shapes of outputs that ONNX's shape inference cannot know (computed shapes)."""
    shapes = output_shapes or {}
    graph = helper.make_graph(nodes, name, [value(n, s) for n, s in inputs], [value(n, shapes.get(n)) for n in outputs],
                              list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="tessel-tests")
    model.ir_version = 7
    model = with_output_shapes(model)
    onnx.checker.check_model(model)
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    r = rng(name)
    for n, s in inputs:
        data = input_data[n] if input_data and n in input_data else r.standard_normal(s).astype(np.float32)
        np.save(os.path.join(d, "input_%s.npy" % n), data)


def with_output_shapes(model):
    """The outputs typed by ONNX's shape inference (the checker wants their shapes)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out in model.graph.output:
        if out.type.tensor_type.HasField("shape"):
            continue
        if out.name in known and known[out.name].type.tensor_type.HasField("shape"):
            out.CopyFrom(known[out.name])
        elif not out.type.tensor_type.HasField("shape"):
            raise SystemExit("%s: no shape inferred for output %s" % (model.graph.name, out.name))
    return model


def weights(name, shape, scale=0.3):
    return (rng(name).standard_normal(shape) * scale).astype(np.float32)


def conv_models():
    w = weights("c1w", (8, 3, 3, 3))
    b = weights("c1b", (8,))
    bn = [init("bn_s", 1 + weights("s", (8,), 0.1)), init("bn_b", weights("b", (8,))), init("bn_m", weights("m", (8,))),
          init("bn_v", 0.5 + np.abs(weights("v", (8,))))]
    save("conv_bn_relu", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 0, 2, 1], strides=[2, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c", "bn_s", "bn_b", "bn_m", "bn_v"], ["n"], epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["y"])],
        [("x", [1, 3, 12, 10])], ["y"], [init("w", w), init("b", b)] + bn, opset=7)
    save("conv_groups", [
        helper.make_node("Conv", ["x", "wg"], ["g0"], group=2, dilations=[2, 2], pads=[2, 1, 2, 3]),
        helper.make_node("Conv", ["g0", "wg2"], ["g"], auto_pad="SAME_UPPER", strides=[1, 2]),
        helper.make_node("Conv", ["g", "wd", "bd"], ["d"], group=6, strides=[2, 2], auto_pad="SAME_LOWER",
                         kernel_shape=[3, 3]),
        helper.make_node("Conv", ["d", "wm"], ["y"], group=6, pads=[1, 1, 1, 1])],
        [("x", [1, 4, 11, 9])], ["y"],
        [init("wg", weights("wg", (6, 2, 3, 3))), init("wg2", weights("wg2", (6, 6, 2, 3))), init("wd", weights("wd", (6, 1, 3, 3))), init("bd", weights("bd", (6,))),
         init("wm", weights("wm", (12, 1, 3, 3)))], opset=11)
    save("conv_transpose", [
        helper.make_node("ConvTranspose", ["x", "w", "b"], ["t"], strides=[2, 2], pads=[1, 0, 0, 1], output_padding=[1, 1]),
        helper.make_node("ConvTranspose", ["t", "w2"], ["y"], group=2, dilations=[2, 1])],
        [("x", [1, 4, 5, 6])], ["y"],
        [init("w", weights("tw", (4, 6, 3, 3))), init("b", weights("tb", (6,))), init("w2", weights("tw2", (6, 2, 2, 3)))],
        opset=13)


def pool_models():
    save("pools", [
        helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0], ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1],
                         count_include_pad=1),
        helper.make_node("AveragePool", ["x"], ["e"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 1, 1]),
        helper.make_node("Add", ["m", "a"], ["s"]),
        helper.make_node("Sub", ["s", "e"], ["y"]),
        helper.make_node("GlobalAveragePool", ["x"], ["ga"]),
        helper.make_node("GlobalMaxPool", ["x"], ["gm"]),
        helper.make_node("Concat", ["ga", "gm"], ["g"], axis=1)],
        [("x", [1, 3, 9, 8])], ["y", "g"], opset=10)
    save("maxpool_same", [
        helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_UPPER"),
        helper.make_node("MaxPool", ["m"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 0, 1], dilations=[1, 2])],
        [("x", [2, 2, 7, 10])], ["y"], opset=12)


def activation_models():
    save("activations", [
        helper.make_node("Clip", ["x", "lo", "hi"], ["c"]),
        helper.make_node("HardSigmoid", ["x"], ["h"], alpha=1 / 6.0, beta=0.5),
        helper.make_node("HardSwish", ["x"], ["w"]),
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("LeakyRelu", ["x"], ["l"], alpha=0.2),
        helper.make_node("Tanh", ["x"], ["t"]),
        helper.make_node("Mul", ["c", "h"], ["m1"]),
        helper.make_node("Div", ["w", "two"], ["m2"]),
        helper.make_node("Add", ["m1", "m2"], ["m3"]),
        helper.make_node("Sub", ["s", "l"], ["m4"]),
        helper.make_node("Mul", ["m4", "row"], ["m5"]),
        helper.make_node("Add", ["m3", "m5"], ["m6"]),
        helper.make_node("Add", ["m6", "t"], ["y"])],
        [("x", [2, 3, 4, 5])], ["y"],
        [init("lo", np.float32(-0.5)), init("hi", np.float32(0.7)), init("two", np.full((3, 1, 1), 2, np.float32)),
         init("row", weights("row", (5,), 1))], opset=14)
    save("clip_attrs", [
        helper.make_node("Clip", ["x"], ["c"], min=-0.25, max=1.5),
        helper.make_node("Clip", ["c"], ["y"], max=1.0)],
        [("x", [1, 2, 3, 4])], ["y"], opset=7)


def dense_models():
    save("gemm_matmul_softmax", [
        helper.make_node("Gemm", ["x", "w", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
        helper.make_node("Gemm", ["g", "w2"], ["h"], transA=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "w3", "c3"], ["k"]),
        helper.make_node("Reshape", ["k", "shape3"], ["k3"]),
        helper.make_node("MatMul", ["k3", "w4"], ["m"]),
        helper.make_node("Softmax", ["m"], ["y"], axis=1)],
        [("x", [3, 6])], ["y"],
        [init("w", weights("gw", (5, 6))), init("c", weights("gc", (5,))), init("w2", weights("gw2", (3, 4))),
         init("w3", weights("gw3", (4, 6))), init("c3", weights("gc3", (5, 6))), init("shape3", np.array([5, 2, 3], np.int64)),
         init("w4", weights("gw4", (3, 4)))], opset=11)
    save("softmax13", [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Softmax", ["m"], ["y"], axis=1)],
        [("x", [2, 3, 4])], ["y"], [init("w", weights("sw", (4, 4)))], opset=13)


def shape_models():
    save("shape_chain", [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"]),
        helper.make_node("Slice", ["s", "one", "big"], ["rest"]),
        helper.make_node("Cast", ["rest"], ["restf"], to=F),
        helper.make_node("Cast", ["restf"], ["resti"], to=TensorProto.INT64),
        helper.make_node("Constant", [], ["minus1"], value=numpy_helper.from_array(np.array([-1], np.int64))),
        helper.make_node("Mul", ["n1", "minus1"], ["neg"]),
        helper.make_node("Mul", ["neg", "minus1"], ["pos"]),
        helper.make_node("Concat", ["pos", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("Flatten", ["x"], ["flat2"], axis=2),
        helper.make_node("Transpose", ["x"], ["tr"], perm=[0, 2, 3, 1]),
        helper.make_node("Squeeze", ["tr", "zero1"], ["sq"]),
        helper.make_node("Unsqueeze", ["sq", "last"], ["us"]),
        helper.make_node("Reshape", ["us", "copyshape"], ["re"]),
        helper.make_node("Identity", ["re"], ["id"]),
        helper.make_node("Dropout", ["id"], ["dr"]),
        helper.make_node("Pad", ["dr", "pads", "pv"], ["y1"]),
        helper.make_node("Relu", ["flat"], ["y2"]),
        helper.make_node("Relu", ["flat2"], ["y3"])],
        [("x", [1, 2, 3, 4])], ["y1", "y2", "y3"],
        [init("zero", np.array(0, np.int64)), init("zero1", np.array([0], np.int64)), init("one", np.array([1], np.int64)),
         init("big", np.array([2**62], np.int64)), init("last", np.array([-1], np.int64)),
         init("copyshape", np.array([0, 4, -1], np.int64)), init("pads", np.array([0, 1, 0, 2, 1, 0], np.int64)),
         init("pv", np.float32(0.25))], opset=13, output_shapes={"y2": [1, 24]})
    save("shape_attrs", [
        helper.make_node("Squeeze", ["x"], ["s"], axes=[0]),
        helper.make_node("Unsqueeze", ["s"], ["u"], axes=[1, 3]),
        helper.make_node("Pad", ["u"], ["p"], pads=[0, 0, 1, 0, 0, 0, 0, 0, 0, 2], value=-1.0),
        helper.make_node("Slice", ["c"], ["cs"], starts=[1], ends=[3], axes=[0]),
        helper.make_node("Reshape", ["p", "cs"], ["y"])],
        [("x", [1, 3, 2, 2])], ["y"], [init("c", np.array([7, 2, -1, 9], np.int64))], opset=9,
        output_shapes={"y": [2, 18]})


def resize_models():
    def scales(*s):
        return np.array(s, np.float32)
    save("resize", [
        helper.make_node("Resize", ["x", "roi", "s2"], ["a"], mode="nearest", coordinate_transformation_mode="asymmetric",
                         nearest_mode="floor"),
        helper.make_node("Resize", ["x", "roi", "none", "size"], ["b"], mode="linear"),
        helper.make_node("Resize", ["x", "roi", "none", "size"], ["c"], mode="linear", coordinate_transformation_mode="align_corners"),
        helper.make_node("Resize", ["x", "roi", "none", "size"], ["d"], mode="nearest",
                         coordinate_transformation_mode="pytorch_half_pixel", nearest_mode="round_prefer_ceil"),
        helper.make_node("Resize", ["x", "roi", "s3"], ["e"], mode="nearest"),
        helper.make_node("Add", ["b", "c"], ["bc"]),
        helper.make_node("Add", ["bc", "d"], ["y1"])],
        [("x", [1, 2, 4, 5])], ["a", "y1", "e"],
        [init("roi", np.zeros(0, np.float32)), init("none", np.zeros(0, np.float32)), init("s2", scales(1, 1, 2, 2)), init("size", np.array([1, 2, 7, 3], np.int64)),
         init("s3", scales(1, 1, 3, 1.6))], opset=11)
    save("upsample9", [helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")],
         [("x", [1, 2, 3, 3])], ["y"], [init("s", scales(1, 1, 2, 3))], opset=9)
    save("resize10", [helper.make_node("Resize", ["x", "s"], ["a"], mode="nearest"),
                      helper.make_node("Resize", ["x", "s"], ["b"], mode="linear"),
                      helper.make_node("Add", ["a", "b"], ["y"])],
         [("x", [1, 2, 3, 4])], ["y"], [init("s", scales(1, 1, 2, 2))], opset=10)


def two_inputs():
    save("two_inputs", [
        helper.make_node("Conv", ["image", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c", "gain"], ["y"]),
        helper.make_node("GlobalAveragePool", ["y"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Softmax", ["f"], ["scores"], axis=1)],
        [("image", [1, 3, 8, 8]), ("gain", [1, 4, 1, 1])], ["scores", "y"], [init("w", weights("tiw", (4, 3, 3, 3)))],
        opset=13)


def opset17():
    """Opset 17: BatchNormalization 15, Shape 15 with start and end (one result unused), Reshape 14,
    Softmax 13."""
    save("opset17", [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
        helper.make_node("HardSwish", ["n"], ["h"]),
        helper.make_node("Shape", ["h"], ["batch"], start=0, end=1),
        helper.make_node("Shape", ["h"], ["hw"], start=-2),
        helper.make_node("Identity", ["hw"], ["hw2"]),
        helper.make_node("Concat", ["batch", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["h", "target"], ["r"]),
        helper.make_node("Softmax", ["r"], ["y"], axis=-1)],
        [("x", [1, 3, 6, 6])], ["y"],
        [init("w", weights("o17w", (4, 3, 3, 3))), init("s", 1 + weights("o17s", (4,), 0.1)), init("b", weights("o17b", (4,))),
         init("m", weights("o17m", (4,))), init("v", 0.5 + np.abs(weights("o17v", (4,)))), init("minus1", np.array([-1], np.int64))],
        opset=17, output_shapes={"y": [1, 144]})


def more_resizing_and_pooling():
    """Opset 13 Resize with omitted roi and scales, opset 7 Upsample, and average pooling whose
    last window (ceil_mode) overhangs the padding, with and without the padding counted."""
    save("resize13", [
        helper.make_node("Resize", ["x", "", "", "size"], ["a"], mode="linear",
                         coordinate_transformation_mode="pytorch_half_pixel"),
        helper.make_node("Resize", ["x", "", "s"], ["b"], mode="nearest", nearest_mode="ceil",
                         coordinate_transformation_mode="half_pixel")],
        [("x", [1, 2, 5, 4])], ["a", "b"], [init("size", np.array([1, 2, 1, 9], np.int64)),
                                            init("s", np.array([1, 1, 0.6, 2.5], np.float32))], opset=13)
    save("upsample7", [helper.make_node("Upsample", ["x"], ["y"], mode="linear", scales=[1.0, 1.0, 2.0, 3.0])],
         [("x", [1, 2, 3, 3])], ["y"], opset=7)
    save("avgpool_ceil", [
        helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
                         count_include_pad=1),
        helper.make_node("AveragePool", ["x"], ["b"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)],
        [("x", [1, 2, 8, 7])], ["a", "b"], opset=12)


def slicing():
    """Slice, Gather and Split of run-time data (strided slices of the graph)."""
    i64 = lambda v: np.array(v, np.int64)
    save("slices", [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Slice", ["r", "starts", "ends", "axes", "steps"], ["s"]),
        helper.make_node("Gather", ["r", "two"], ["g1"], axis=1),
        helper.make_node("Gather", ["r", "uneven"], ["g2"], axis=2),
        helper.make_node("Gather", ["r", "even"], ["g3"], axis=-2),
        helper.make_node("Split", ["r", "sizes"], ["p1", "p2", "p3"], axis=1),
        helper.make_node("Add", ["p2", "s"], ["y1"]),
        helper.make_node("Mul", ["g2", "g3"], ["y2"]),
        helper.make_node("Sigmoid", ["p3"], ["y3"]),
        helper.make_node("Tanh", ["g1"], ["y4"]),
        helper.make_node("Relu", ["p1"], ["y5"])],
        [("x", [1, 6, 5, 4])], ["y1", "y2", "y3", "y4", "y5"],
        [init("starts", i64([1, -1])), init("ends", i64([5, -5])), init("axes", i64([1, 3])), init("steps", i64([2, -1])),
         init("two", i64(2)), init("uneven", i64([3, 0, 4])), init("even", i64([4, 2, 0])), init("sizes", i64([1, 2, 3]))],
        opset=13)
    save("split11", [helper.make_node("Split", ["x"], ["a", "b"], axis=3),
                     helper.make_node("Sub", ["a", "b"], ["y"])],
         [("x", [1, 2, 3, 6])], ["y"], opset=11)


def classifier():
    """1000 class scores from an image: the first three are the mean of R, G and B (tessel
    classify's test reads a red, a green and a blue picture with it)."""
    w = np.zeros((1000, 3), np.float32)
    w[0, 0] = w[1, 1] = w[2, 2] = 1
    save("rgb_classifier", [
        helper.make_node("GlobalAveragePool", ["image"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "w"], ["scores"], transB=1)],
        [("image", [1, 3, 16, 16])], ["scores"], [init("w", w)], opset=13)


def bad_models():
    os.makedirs(BAD, exist_ok=True)

    def write(name, nodes, inputs, outputs, initializers=(), opset=13, check=True, out_shape=(1, 2, 4, 4)):
        graph = helper.make_graph(nodes, name, [value(n, s) for n, s in inputs], [value(n, out_shape) for n in outputs],
                                  list(initializers))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 7
        if check:
            onnx.checker.check_model(model)
        onnx.save(model, os.path.join(BAD, name + ".onnx"))
    x = [("x", [1, 2, 4, 4])]
    write("unknown_op", [helper.make_node("Frobnicate", ["x"], ["y"])], x, ["y"], check=False)
    write("unsupported_op", [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Det", ["r"], ["y"], name="det_1")],
          x, ["y"])
    write("unsupported_attribute", [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="cubic", name="up")], x, ["y"],
          [init("s", np.array([1, 1, 2, 2], np.float32))])
    write("cycle", [helper.make_node("Add", ["x", "b"], ["a"], name="first"), helper.make_node("Relu", ["a"], ["b"], name="second")],
          x, ["b"], check=False)
    bad = helper.make_tensor("w", F, [2, 2, 3, 3], np.zeros(36, np.float32).tolist())
    del bad.float_data[30:]  # 30 values for 36 elements: the helper refuses to write it
    write("initializer_size", [helper.make_node("Conv", ["x", "w"], ["y"])], x, ["y"], [bad], check=False)
    write("kernel_shape", [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[5, 5], name="conv")], x, ["y"],
          [init("w", np.zeros((2, 2, 3, 3), np.float32))])
    write("weight_channels", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], x, ["y"],
          [init("w", np.zeros((2, 3, 3, 3), np.float32))])
    write("symbolic", [helper.make_node("Relu", ["x"], ["y"])], [("x", ["N", 3, 8, 8])], ["y"])
    write("opset6", [helper.make_node("Relu", ["x"], ["y"])], x, ["y"], opset=6)
    write("small", [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
          x, ["y"], [init("w", weights("small", (3, 2, 3, 3))), init("b", weights("smallb", (3,)))], out_shape=(1, 3, 4, 4))


if __name__ == "__main__":
    shutil.rmtree(MODELS, ignore_errors=True)
    shutil.rmtree(BAD, ignore_errors=True)
    conv_models()
    pool_models()
    activation_models()
    dense_models()
    shape_models()
    resize_models()
    two_inputs()
    opset17()
    more_resizing_and_pooling()
    slicing()
    classifier()
    bad_models()
