"""The `accelsim` command line. Only this module prints; everything else logs."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence

from runtime.errors import AccelsimError

log = logging.getLogger("accelsim")

_EPILOG_INSPECT = """examples:
  accelsim inspect tests/fixtures/models/mobilenet_v2_035_96_int8.tflite
  accelsim inspect model.tflite --json > ops.json
"""

_EPILOG_OPS = """examples:
  accelsim ops tests/fixtures/models/dilated_cnn_int8.tflite
  accelsim ops model.tflite > my_resolver.py
"""


def _tensor_row(tensors, index: int) -> dict:
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


def inspect_model(path: str) -> dict:
    """Everything `accelsim inspect` shows, as plain data (the --json output)."""
    from runtime.model import load_model
    from runtime.resolver import BuiltinOpResolver
    from runtime.versioning import get_builtin_operator_version, min_runtime_version, op_signature

    model = load_model(path)
    resolver = BuiltinOpResolver()
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
                "inputs": [_tensor_row(sg.tensors, i) for i in op.inputs],
                "outputs": [_tensor_row(sg.tensors, i) for i in op.outputs],
            })
    unique_missing = sorted({(m["op"], m["version"]) for m in missing})
    return {
        "model": str(path),
        "min_runtime_version": min_runtime_version(model),
        "subgraphs": len(model.subgraphs),
        "operators": operators,
        "tensors": [_tensor_row(sg.tensors, i) for i in range(len(sg.tensors))],
        "unsupported_ops": [{"op": op, "version": v} for op, v in unique_missing],
    }


def _fmt_tensor(row: dict) -> str:
    if row["index"] < 0:
        return "-"
    q = " q" if row["quantized"] else ""
    return f"{row['index']}:{row['dtype'].lower()}{row['shape']}{q}"


def _cmd_inspect(args: argparse.Namespace) -> int:
    info = inspect_model(args.model)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"model: {info['model']}")
    print(f"subgraphs: {info['subgraphs']}   operators (subgraph 0): {len(info['operators'])}   "
          f"min runtime version: {info['min_runtime_version'] or 'unknown'}")
    print(f"{'#':>4}  {'op':<26} {'ver':>3} {'sig':>3}  inputs -> outputs")
    for op in info["operators"]:
        flag = "" if op["supported"] else "  [no kernel]"
        ins = ", ".join(_fmt_tensor(t) for t in op["inputs"])
        outs = ", ".join(_fmt_tensor(t) for t in op["outputs"])
        print(f"{op['index']:>4}  {op['op']:<26} {op['version']:>3} {op['computed_version']:>3}  {ins} -> {outs}{flag}")
    print("ver = version in the file, sig = version computed from the op's signature; q = quantized")
    if info["unsupported_ops"]:
        names = ", ".join(f"{m['op']} v{m['version']}" for m in info["unsupported_ops"])
        print(f"ops this model needs that accelsim lacks: {names}")
    return 0


def registration_code(path: str) -> str:
    """Python that builds a resolver holding exactly the model's ops (selective registration)."""
    from runtime.model import load_model
    from runtime.resolver import BuiltinOpResolver, resolver_for_model

    model = load_model(path)
    rows = resolver_for_model(model, BuiltinOpResolver()).registrations()
    customs = sorted({op.custom_code for sg in model.subgraphs for op in sg.operators if op.op == "CUSTOM"})
    lines = [
        f"# Selective registration for {path}",
        "from runtime.resolver import BuiltinOpResolver, MutableOpResolver",
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


def _cmd_ops(args: argparse.Namespace) -> int:
    print(registration_code(args.model))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="accelsim",
        description="Hardware-simulation testbed for TensorFlow Lite delegates.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `accelsim COMMAND --help` for a command's options and examples.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    raw = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser("inspect", help="list operators, versions and min runtime version of a model",
                       description="Show every operator of a .tflite model: op, version in the file, version "
                       "computed from its signature, input/output tensors, and the model's minimum runtime.",
                       epilog=_EPILOG_INSPECT, formatter_class=raw)
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("ops", help="print the resolver registrations a model needs, as pasteable Python",
                       description="Selective registration: print Python that builds a resolver holding "
                       "exactly the (op, version) pairs the model uses.",
                       epilog=_EPILOG_OPS, formatter_class=raw)
    p.add_argument("model", help="path of a .tflite file")
    p.set_defaults(func=_cmd_ops)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return func(args)
    except (AccelsimError, FileNotFoundError, PermissionError, IsADirectoryError) as exc:
        if args.debug:
            raise
        print(f"accelsim {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"accelsim {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps Python's exit flush from failing again
        return 141
