"""ONNX model -> layer list, through TVM's Relax ONNX frontend (``tvm.relax.frontend.onnx``).

The ONNX graph is checked node by node first, so a malformed or unsupported model gives
one line naming the node. The Relax module is then walked binding by binding: conv2d,
matmul, pooling and elementwise ops with two activation inputs become layers; bias adds,
batch norms, activations and reshapes are folded into the layer that produced their input.
Needs the optional dependency ``onnx``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plugins.dlfusion.layers import (
    NETWORK_INPUT, Layer, ModelError, Network, conv2d_ops, dense_ops,
)

# ONNX ops the walker understands (the ones in the paper's CNNs plus common companions).
LAYER_OPS = {"Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
             "GlobalMaxPool"}
ELEMENTWISE_OPS = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum"}
FOLDED_OPS = {"Relu", "Clip", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
              "Elu", "Selu", "PRelu", "Softmax", "BatchNormalization", "Flatten", "Reshape",
              "Transpose", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Constant", "Cast"}
SUPPORTED_OPS = LAYER_OPS | ELEMENTWISE_OPS | FOLDED_OPS
_MIN_INPUTS = {"Conv": 2, "Gemm": 2, "MatMul": 2, "BatchNormalization": 5, "Add": 2,
               "Sub": 2, "Mul": 2, "Div": 2, "Max": 1, "Min": 1, "Sum": 1, "Reshape": 2,
               "PRelu": 2}

_RELAX_ELEMENTWISE = {"relax.add", "relax.subtract", "relax.multiply", "relax.divide",
                      "relax.maximum", "relax.minimum"}
_RELAX_FOLD = {"relax.nn.relu", "relax.nn.gelu", "relax.nn.silu", "relax.sigmoid",
               "relax.tanh", "relax.clip", "relax.nn.leakyrelu", "relax.nn.prelu",
               "relax.nn.softmax", "relax.nn.batch_norm", "relax.reshape",
               "relax.permute_dims", "relax.flatten", "relax.squeeze", "relax.expand_dims",
               "relax.astype", "relax.nn.dropout", "relax.exp", "relax.negative",
               "relax.sqrt", "relax.power", "relax.nn.elu", "relax.nn.selu",
               "relax.nn.hardswish", "relax.where", "relax.greater", "relax.less",
               "relax.nn.hardsigmoid"}
_RELAX_POOL = {"relax.nn.max_pool2d", "relax.nn.avg_pool2d"}
_RELAX_GLOBAL_POOL = {"relax.nn.adaptive_avg_pool2d", "relax.mean", "relax.max"}


def _node_label(node: Any, idx: int) -> str:
    name = node.name or (node.output[0] if node.output else "")
    return f"node {name!r} (#{idx}, {node.op_type})" if name else f"node #{idx} ({node.op_type})"


def _import_onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise ModelError("reading ONNX files needs the optional dependency onnx: "
                         "pip install 'tuning-orchestrator[onnx]'") from None
    return onnx


def check_onnx_graph(model: Any, where: str) -> None:
    """One-line ModelError naming the first unsupported or malformed node."""
    graph = model.graph
    known = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    for idx, node in enumerate(graph.node):
        label = _node_label(node, idx)
        if node.domain not in ("", "ai.onnx"):
            raise ModelError(f"{where}: {label} is from op domain {node.domain!r}, "
                             "which is not supported")
        if node.op_type not in SUPPORTED_OPS:
            raise ModelError(f"{where}: {label} uses op {node.op_type}, which the DLFusion "
                             f"planner does not support (supported: conv, dense/matmul, "
                             f"pooling, elementwise and activations)")
        need = _MIN_INPUTS.get(node.op_type, 1 if node.op_type != "Constant" else 0)
        present = [x for x in node.input if x]
        if len(present) < need:
            raise ModelError(f"{where}: {label} is malformed: it has {len(present)} input(s), "
                             f"{node.op_type} needs at least {need}")
        for name in node.input:
            if name not in known:
                raise ModelError(f"{where}: {label} is malformed: it reads {name!r}, which no "
                                 "earlier node, graph input or initializer defines")
        if not node.output or not node.output[0]:
            raise ModelError(f"{where}: {label} is malformed: it has no output")
        known.update(node.output)
    for out in graph.output:
        if out.name not in known:
            raise ModelError(f"{where}: graph output {out.name!r} is not produced by any node")


def _input_shapes(model: Any, where: str) -> dict[str, list[int]]:
    inits = {t.name for t in model.graph.initializer}
    shapes: dict[str, list[int]] = {}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        ttype = inp.type.tensor_type
        if not ttype.HasField("shape"):
            raise ModelError(f"{where}: graph input {inp.name!r} has no shape")
        dims = []
        for pos, d in enumerate(ttype.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                dims.append(int(d.dim_value))
            elif pos == 0:
                dims.append(1)  # symbolic batch: plan for batch 1, as the paper's FPS
            else:
                raise ModelError(f"{where}: graph input {inp.name!r} has a symbolic dimension "
                                 f"{d.dim_param or '?'} at position {pos}; export with fixed "
                                 "spatial sizes")
        shapes[inp.name] = dims
    if not shapes:
        raise ModelError(f"{where}: the graph has no inputs")
    return shapes


def _onnx_layer_names(model: Any) -> dict[str, list[str]]:
    """ONNX node names per layer category, in graph order (Relax keeps that order)."""
    inits = {t.name for t in model.graph.initializer}
    consts = {o for n in model.graph.node if n.op_type == "Constant" for o in n.output} | inits
    out: dict[str, list[str]] = {"conv": [], "dense": [], "pool": [], "elementwise": []}
    for idx, node in enumerate(model.graph.node):
        name = node.name or f"{node.op_type}_{idx}"
        if node.op_type == "Conv":
            out["conv"].append(name)
        elif node.op_type in ("Gemm", "MatMul"):
            out["dense"].append(name)
        elif node.op_type in ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"):
            out["pool"].append(name)
        elif node.op_type in ELEMENTWISE_OPS and \
                len({x for x in node.input if x and x not in consts}) >= 2:
            out["elementwise"].append(name)
    return out


def load_onnx(path: Path | str, name: str | None = None) -> Network:
    """Read an ONNX file and return its layer list (batch 1)."""
    path = Path(path)
    onnx = _import_onnx()
    where = str(path)
    try:
        model = onnx.load(str(path))
    except FileNotFoundError:
        raise ModelError(f"{where}: no such file") from None
    except Exception as exc:  # protobuf raises DecodeError and friends
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelError(f"{where}: not a readable ONNX model ({first})") from None
    return network_from_onnx(model, name or path.stem, where)


def network_from_onnx(model: Any, name: str, where: str = "<onnx model>") -> Network:
    """Layer list of an in-memory ``onnx.ModelProto``."""
    onnx = _import_onnx()
    check_onnx_graph(model, where)
    try:
        onnx.checker.check_model(model)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"{where}: ONNX checker rejected the model: {first}") from None
    shapes = _input_shapes(model, where)
    try:
        from tvm.relax.frontend.onnx import from_onnx
        mod = from_onnx(model, shape_dict=shapes)
    except ModelError:
        raise
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"{where}: TVM's Relax ONNX frontend could not import it: "
                         f"{first}") from None
    return _walk_relax(mod, name, where, _onnx_layer_names(model))


# ---- Relax walk -----------------------------------------------------------------------

def _shape(expr: Any) -> list[int] | None:
    from tvm import relax
    ty = getattr(expr, "ty", None)
    if isinstance(ty, relax.TensorType) and ty.shape is not None:
        try:
            return [int(d) for d in ty.shape.values]
        except (TypeError, ValueError, AttributeError):
            return None
    return None


def _attrs(call: Any) -> dict[str, Any]:
    if call.attrs is None:
        return {}
    skip = {"get_int", "get_int_tuple", "get_str", "id_", "is_", "same_as"}
    out = {}
    for k in dir(call.attrs):
        if k.startswith("_") or k in skip:
            continue
        v = getattr(call.attrs, k)
        if not callable(v):
            out[k] = tuple(v) if hasattr(v, "__len__") and not isinstance(v, str) else v
    return out


class _Walker:
    """Maps Relax vars to producers: a layer index, the network input, or a constant."""

    CONST = "const"

    def __init__(self, name: str, where: str, names: dict[str, list[str]]) -> None:
        self.name, self.where, self.names = name, where, names
        self.used = {k: 0 for k in names}
        self.layers: list[Layer] = []
        self.env: dict[Any, Any] = {}

    def label(self, category: str, fallback: str) -> str:
        pool = self.names.get(category, [])
        i = self.used[category]
        self.used[category] += 1
        return pool[i] if i < len(pool) else fallback

    def src(self, expr: Any) -> Any:
        """Producer of an argument; constants (weights, shapes, scalars) give CONST."""
        from tvm import relax
        if isinstance(expr, (relax.Var, relax.DataflowVar)) or type(expr).__name__ == "Var":
            return self.env.get(expr, NETWORK_INPUT)
        if isinstance(expr, relax.Tuple):
            acts = [s for s in (self.src(f) for f in expr.fields) if s != self.CONST]
            return acts[0] if acts else self.CONST
        if isinstance(expr, (relax.Call, relax.TupleGetItem, relax.SeqExpr, relax.Function)):
            raise ModelError(f"{self.where}: unexpected nested Relax {type(expr).__name__}")
        return self.CONST

    def add(self, layer: Layer) -> int:
        self.layers.append(layer)
        return len(self.layers) - 1

    def fail(self, what: str, var: Any) -> None:
        raise ModelError(f"{self.where}: {what} (Relax binding {getattr(var, 'name', '?')})")

    def binding(self, var: Any, value: Any) -> None:
        from tvm import relax
        import tvm
        if isinstance(value, relax.TupleGetItem):
            self.env[var] = self.src(value.tuple_value)
            return
        if not isinstance(value, relax.Call):
            self.env[var] = self.src(value)
            return
        if not isinstance(value.op, tvm.ir.Op):
            self.fail(f"unsupported Relax expression {type(value).__name__}", var)
        op = value.op.name
        srcs = [self.src(a) for a in value.args]
        acts = list(dict.fromkeys(s for s in srcs if s != self.CONST))
        if not acts:
            self.env[var] = self.CONST
            return
        out_shape = _shape(var)
        if op == "relax.nn.conv2d":
            self.env[var] = self.conv(var, value, srcs[0], out_shape)
        elif op == "relax.matmul":
            self.env[var] = self.matmul(var, value, srcs, out_shape)
        elif op in _RELAX_POOL:
            self.env[var] = self.pool(var, value, srcs[0], out_shape)
        elif op in _RELAX_GLOBAL_POOL and self.is_global(value, out_shape):
            self.env[var] = self.global_pool(var, value, srcs[0], out_shape)
        elif op in _RELAX_ELEMENTWISE and len(acts) >= 2:
            self.env[var] = self.elementwise(var, acts, out_shape)
        elif op in _RELAX_ELEMENTWISE or op in _RELAX_FOLD:
            self.env[var] = acts[0]
        else:
            self.fail(f"Relax op {op} has no layer mapping in the DLFusion planner", var)

    def conv(self, var: Any, call: Any, src: Any, out_shape: list[int] | None) -> int:
        a = _attrs(call)
        in_shape, w_shape = _shape(call.args[0]), _shape(call.args[1])
        if a.get("data_layout", "NCHW") != "NCHW" or a.get("kernel_layout", "OIHW") != "OIHW":
            self.fail("conv2d layout other than NCHW/OIHW", var)
        if not (in_shape and w_shape and out_shape) or len(in_shape) != 4:
            self.fail("conv2d without static 4-D shapes", var)
        n, c_in, _, _ = in_shape
        c_out, _, kh, kw = w_shape
        groups = int(a.get("groups", 1))
        dil = tuple(int(d) for d in a.get("dilation", (1, 1)))
        stride = tuple(int(s) for s in a.get("strides", (1, 1)))
        ho, wo = out_shape[2], out_shape[3]
        kind = "depthwise" if groups > 1 and groups == c_in else "conv2d"
        return self.add(Layer(
            name=self.label("conv", getattr(var, "name", "conv")), kind=kind,
            in_shape=tuple(in_shape), out_shape=tuple(out_shape),
            ops=n * conv2d_ops(ho, wo, kh, kw, c_in, c_out, groups),
            weight_elems=math.prod(w_shape),
            kernel=(dil[0] * (kh - 1) + 1, dil[1] * (kw - 1) + 1),
            stride=(stride[0], stride[1]), groups=groups, inputs=(src,)))

    def matmul(self, var: Any, call: Any, srcs: Sequence[Any],
               out_shape: list[int] | None) -> int:
        a_shape, b_shape = _shape(call.args[0]), _shape(call.args[1])
        if not (a_shape and b_shape and out_shape):
            self.fail("matmul without static shapes", var)
        k = a_shape[-1]
        n_out = out_shape[-1]
        m = math.prod(out_shape[:-1])
        weight = srcs[1] == self.CONST
        inputs = tuple(s for s in srcs if s != self.CONST) or (NETWORK_INPUT,)
        return self.add(Layer(
            name=self.label("dense", getattr(var, "name", "matmul")), kind="dense",
            in_shape=(m, k), out_shape=(m, n_out), ops=dense_ops(m, k, n_out),
            weight_elems=math.prod(b_shape) if weight else 0, inputs=inputs))

    def pool(self, var: Any, call: Any, src: Any, out_shape: list[int] | None) -> int:
        a = _attrs(call)
        in_shape = _shape(call.args[0])
        if a.get("layout", "NCHW") != "NCHW" or not (in_shape and out_shape):
            self.fail("pooling without NCHW static shapes", var)
        kh, kw = (int(x) for x in a["pool_size"])
        sh, sw = (int(x) for x in a.get("strides", (1, 1)))
        return self.add(Layer(
            name=self.label("pool", getattr(var, "name", "pool")), kind="pool",
            in_shape=tuple(in_shape), out_shape=tuple(out_shape),
            ops=math.prod(out_shape) * kh * kw, kernel=(kh, kw), stride=(sh, sw),
            inputs=(src,)))

    @staticmethod
    def is_global(call: Any, out_shape: list[int] | None) -> bool:
        in_shape = _shape(call.args[0])
        return bool(in_shape and out_shape and len(in_shape) == 4
                    and math.prod(out_shape) == in_shape[0] * in_shape[1])

    def global_pool(self, var: Any, call: Any, src: Any, out_shape: list[int] | None) -> int:
        in_shape = _shape(call.args[0])
        assert in_shape is not None
        n, c, h, w = in_shape
        return self.add(Layer(
            name=self.label("pool", getattr(var, "name", "pool")), kind="pool",
            in_shape=tuple(in_shape), out_shape=(n, c, 1, 1), ops=n * c * h * w,
            kernel=(h, w), stride=(h, w), inputs=(src,)))

    def elementwise(self, var: Any, acts: list[Any], out_shape: list[int] | None) -> int:
        if not out_shape:
            self.fail("elementwise op without a static shape", var)
        return self.add(Layer(
            name=self.label("elementwise", getattr(var, "name", "add")), kind="elementwise",
            in_shape=tuple(out_shape), out_shape=tuple(out_shape), ops=math.prod(out_shape),
            inputs=tuple(acts)))


def _walk_relax(mod: Any, name: str, where: str, names: dict[str, list[str]]) -> Network:
    from tvm import relax
    func = mod["main"]
    if len(func.params) != 1:
        raise ModelError(f"{where}: the DLFusion planner takes models with one input, "
                         f"this one has {len(func.params)}")
    walker = _Walker(name, where, names)
    body = func.body
    if not isinstance(body, relax.SeqExpr):
        raise ModelError(f"{where}: unexpected Relax function body {type(body).__name__}")
    for block in body.blocks:
        for b in block.bindings:
            walker.binding(b.var, b.value)
    if not walker.layers:
        raise ModelError(f"{where}: the model has no conv, dense, pooling or elementwise layer")
    return Network(name, tuple(walker.layers), source=where)
