"""List the import names a wheel installs at the top of site-packages; fail on any but `accelsim`.

Reads the wheel's own file list (a wheel is a zip): every entry's first path component, except the
.dist-info and .data folders, counts; `x.py`, `x.cpython-311-x86_64-linux-gnu.so` and `x.pth` count
as `x`. Usage: python .ci/wheel_names.py dist/accelsim-*.whl
"""

import sys
import zipfile

ALLOWED = {"accelsim"}


def top_level_names(wheel: str) -> set[str]:
    """The names a wheel puts at the top of site-packages."""
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    return {top.split(".", 1)[0] for top in tops if not top.endswith((".dist-info", ".data"))}


def main(wheels: list[str]) -> int:
    if not wheels:
        print("usage: python .ci/wheel_names.py WHEEL...", file=sys.stderr)
        return 2
    bad = 0
    for wheel in wheels:
        names = top_level_names(wheel)
        print(f"{wheel}: top-level names: {', '.join(sorted(names)) or 'none'}")
        if names != ALLOWED:
            print(f"{wheel}: error: the wheel must install exactly {', '.join(sorted(ALLOWED))}; extra: "
                  f"{', '.join(sorted(names - ALLOWED)) or 'none'}, missing: "
                  f"{', '.join(sorted(ALLOWED - names)) or 'none'}", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
