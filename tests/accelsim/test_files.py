"""Atomic writes: whole files only, and modes that follow the umask like any other tool's output."""

from __future__ import annotations

import os
import stat

import pytest

from accelsim.core import files


@pytest.fixture
def umask():
    """Set the process umask for one test and put the old one back."""
    old = os.umask(0o022)
    try:
        yield os.umask
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_written_files_honour_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    path = files.write_atomic(tmp_path / "sub" / "report.md", "text\n")
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_text() == "text\n"
    files.write_atomic(path, b"again\n")  # replacing keeps following the umask
    assert stat.S_IMODE(path.stat().st_mode) == mode and path.read_bytes() == b"again\n"


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    (tmp_path / "x.json").write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        files.write_atomic(tmp_path / "x.json", "new")
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"] and (tmp_path / "x.json").read_text() == "old"
