"""Atomic file writes that honour the umask, for every file accelsim writes (reports, plots, traces, cache)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

_NEW_FILE_MODE = 0o666  # what open() and shell redirection ask for; the kernel then clears the umask's bits


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write `data` (str as UTF-8) via a temporary file in the same folder and os.replace.

    Readers never see half a file. The temporary file is created with mode 0o666 and the
    kernel applies the process umask, as for any other tool's output (tempfile.mkstemp would
    force 0o600, unreadable to the rest of a team).

    Returns:
        `path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _NEW_FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
