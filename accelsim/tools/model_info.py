"""What a model holds and needs: its operators, tensors and versions, its delegation, and the
selective-registration code of its ops (`accelsim inspect` and `accelsim ops` print these)."""

from __future__ import annotations

from collections.abc import Sequence

from accelsim.runtime.interpreter import Interpreter
from accelsim.runtime.op_signature import op_signature
from accelsim.runtime.op_versions import get_builtin_operator_version
from accelsim.runtime.read import load_model
from accelsim.runtime.resolver import default_resolver, resolver_for_model
from accelsim.runtime.versioning import min_runtime_version


def tensor_row(tensors, index: int) -> dict:
    """One tensor as plain data (index -1: an omitted optional input)."""
    if index < 0:
        return {"index": -1, "name": None, "dtype": None, "shape": None, "quantized": False}
    t = tensors[index]
    return {
        "index": index,
        "name": t.name,
        "dtype": t.type,
        "shape": list(t.shape),
        "quantized": bool(t.quantization is not None and t.quantization.is_quantized),
    }


def delegation_rows(path: str, delegates: Sequence) -> list[dict]:
    """Per node: claimed by which delegate (and partition), or every delegate's reason for not."""
    interpreter = Interpreter(model_path=path, experimental_delegates=list(delegates))
    return [{"index": r["index"], "op": r["op"], "version": r["version"], "claimed": r["claimed"],
             "delegate": r["delegate"], "partition": r["partition"], "reason": r["reason"]}
            for r in interpreter.get_delegation_report()]


def inspect_model(path: str, delegates: Sequence = ()) -> dict:
    """Everything `accelsim inspect` shows, as plain data (the --json output)."""
    model = load_model(path)
    resolver = default_resolver()  # builtins plus the --ops kernels
    sg = model.subgraphs[0]
    operators = []
    missing = []
    for si, subgraph in enumerate(model.subgraphs):
        for oi, op in enumerate(subgraph.operators):
            if op.op == "CUSTOM":
                computed = op.version
                supported = resolver.find_custom(op.custom_code or "", op.version) is not None
            else:
                computed = get_builtin_operator_version(op_signature(model, si, oi))
                supported = resolver.find_op(op.op, op.version) is not None
            if not supported:
                missing.append({"op": op.display_name, "version": op.version})
            if si:
                continue
            operators.append({
                "index": oi,
                "op": op.display_name,
                "version": op.version,
                "computed_version": computed,
                "supported": supported,
                "inputs": [tensor_row(sg.tensors, i) for i in op.inputs],
                "outputs": [tensor_row(sg.tensors, i) for i in op.outputs],
            })
    unique_missing = sorted({(m["op"], m["version"]) for m in missing})
    return {
        "model": str(path),
        "min_runtime_version": min_runtime_version(model),
        "subgraphs": len(model.subgraphs),
        "operators": operators,
        "tensors": [tensor_row(sg.tensors, i) for i in range(len(sg.tensors))],
        "unsupported_ops": [{"op": op, "version": v} for op, v in unique_missing],
        "delegation": delegation_rows(path, delegates) if delegates else None,
    }


def registration_code(path: str) -> str:
    """Python that builds a resolver holding exactly the model's ops (selective registration)."""
    model = load_model(path)
    rows = resolver_for_model(model, default_resolver()).registrations()
    customs = sorted({op.custom_code for sg in model.subgraphs for op in sg.operators if op.op == "CUSTOM"})
    lines = [
        f"# Selective registration for {path}",
        "from accelsim.runtime.resolver import BuiltinOpResolver, MutableOpResolver",
        "",
        "builtin = BuiltinOpResolver()",
        "resolver = MutableOpResolver()",
    ]
    for name, custom, lo, hi in rows:
        if not custom:
            lines.append(f'resolver.add_builtin("{name}", builtin.find_op("{name}", {hi}), '
                         f"min_version={lo}, max_version={hi})")
    for name in customs:
        versions = sorted({op.version for sg in model.subgraphs for op in sg.operators if op.custom_code == name})
        lines.append(f'# resolver.add_custom("{name}", <your Registration>, min_version={versions[0]}, '
                     f"max_version={versions[-1]})  # custom op: bring your own kernel")
    return "\n".join(lines)
