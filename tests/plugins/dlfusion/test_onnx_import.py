"""Layer extraction from ONNX through TVM's Relax frontend, and its one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from plugins.dlfusion.layers import ModelError  # noqa: E402
from plugins.dlfusion.onnx_import import load_onnx, network_from_onnx  # noqa: E402


def _w(name, shape):
    return numpy_helper.from_array(np.random.default_rng(0).random(shape, dtype=np.float32), name)


def _model(nodes, inits, in_shape=("N", 3, 32, 32), out_shape=("N", 10)):
    graph = helper.make_graph(
        nodes, "test",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def small_cnn_onnx():
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c1", "s", "bb", "m", "v"], ["bn1"], name="bn1"),
        helper.make_node("Relu", ["bn1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="dw", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], group=16),
        helper.make_node("Conv", ["c2", "w3"], ["c3"], name="pw", kernel_shape=[1, 1]),
        helper.make_node("Add", ["c3", "p1"], ["a1"], name="residual"),
        helper.make_node("GlobalAveragePool", ["a1"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1),
    ]
    inits = [_w("w1", (16, 3, 3, 3)), _w("b1", (16,)), _w("s", (16,)), _w("bb", (16,)),
             _w("m", (16,)), _w("v", (16,)), _w("w2", (16, 1, 3, 3)), _w("w3", (16, 16, 1, 1)),
             _w("wf", (10, 16)), _w("bf", (10,))]
    return _model(nodes, inits)


def test_extracts_layers_shapes_and_op_counts(tmp_path):
    path = tmp_path / "small.onnx"
    onnx.save(small_cnn_onnx(), str(path))
    net = load_onnx(path)
    assert net.name == "small"
    got = [(l.name, l.kind, l.out_shape, l.ops, l.inputs) for l in net.layers]
    assert got == [
        ("conv1", "conv2d", (1, 16, 16, 16), 2 * 16 * 16 * 9 * 3 * 16, (-1,)),
        ("pool1", "pool", (1, 16, 8, 8), 16 * 8 * 8 * 9, (0,)),
        ("dw", "depthwise", (1, 16, 8, 8), 2 * 8 * 8 * 9 * 16, (1,)),
        ("pw", "conv2d", (1, 16, 8, 8), 2 * 8 * 8 * 16 * 16, (2,)),
        ("residual", "elementwise", (1, 16, 8, 8), 16 * 8 * 8, (3, 1)),
        ("gap", "pool", (1, 16, 1, 1), 16 * 8 * 8, (4,)),
        ("fc", "dense", (1, 10), 2 * 16 * 10, (5,)),
    ]
    conv1 = net.layers[0]
    assert (conv1.c_in, conv1.c_out, conv1.kernel, conv1.stride) == (3, 16, (3, 3), (2, 2))
    assert conv1.weight_elems == 16 * 3 * 9 and net.layers[6].weight_elems == 160


def test_garbage_file_is_one_line_error(tmp_path):
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\x08\x07garbage\xff\xfe" * 10)
    with pytest.raises(ModelError) as exc:
        load_onnx(path)
    assert "junk.onnx" in str(exc.value) and "\n" not in str(exc.value)


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="no such file"):
        load_onnx(tmp_path / "absent.onnx")


def test_malformed_node_is_named():
    model = small_cnn_onnx()
    conv = model.graph.node[4]
    del conv.input[1]          # depthwise conv without its weight
    with pytest.raises(ModelError) as exc:
        network_from_onnx(model, "broken")
    msg = str(exc.value)
    assert "'dw'" in msg and "malformed" in msg and "\n" not in msg


def test_undefined_input_is_named():
    model = small_cnn_onnx()
    model.graph.node[5].input[0] = "nowhere"
    with pytest.raises(ModelError) as exc:
        network_from_onnx(model, "broken")
    assert "'pw'" in str(exc.value) and "nowhere" in str(exc.value)
    assert "\n" not in str(exc.value)


def test_unsupported_op_is_named():
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", kernel_shape=[3, 3]),
             helper.make_node("LpNormalization", ["c1"], ["y"], name="norm7")]
    model = _model(nodes, [_w("w1", (10, 3, 3, 3))], out_shape=("N", 10, 30, 30))
    with pytest.raises(ModelError) as exc:
        network_from_onnx(model, "unsupported")
    msg = str(exc.value)
    assert "'norm7'" in msg and "LpNormalization" in msg and "\n" not in msg
