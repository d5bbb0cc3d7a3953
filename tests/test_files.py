"""Files written whole (mlcourse_utils/_files.py): the usual permissions, never half a file."""

from __future__ import annotations

import os
import stat

import pytest

from mlcourse_utils import _files


@pytest.mark.parametrize("umask,expected", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_written_files_get_the_permissions_open_gives(tmp_path, umask, expected):
    """``0666`` less the umask, as ``open`` gives (mkstemp alone gives 0600: PDFs and pages
    were readable by their owner only)."""
    old = os.umask(umask)
    try:
        _files.write_text(tmp_path / "a.html", "<p>x</p>")
        _files.write_bytes(tmp_path / "b.pdf", b"%PDF-1.7")
        plain = tmp_path / "plain"
        plain.write_text("")  # what open() gives, for comparison
    finally:
        os.umask(old)
    for name in ("a.html", "b.pdf"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected, name
    assert stat.S_IMODE(plain.stat().st_mode) == expected


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "grades.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), _files.atomic_open(target, "w") as fh:
        fh.write("half of the new")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv"]


def test_a_replaced_file_is_a_new_inode(tmp_path):
    """Renamed into place: a reader holding the old file keeps reading the old bytes."""
    target = tmp_path / "page.html"
    target.write_text("old")
    with open(target) as reader:
        _files.write_text(target, "new")
        assert reader.read() == "old"
    assert target.read_text() == "new"


def test_only_write_modes(tmp_path):
    with pytest.raises(ValueError, match="mode"), _files.atomic_open(tmp_path / "x", "a"):
        pass


def test_pdfs_are_written_readable_by_others(tmp_path):
    """`mlcourse pdf` writes through mkstemp: the PDF gets 0644 under umask 022, not 0600."""
    from mlcourse_utils.book import pdf

    old = os.umask(0o022)
    try:
        pdf._write_whole(tmp_path / "notes.pdf", b"%PDF-1.7\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "notes.pdf").stat().st_mode) == 0o644
    assert (tmp_path / "notes.pdf").read_bytes() == b"%PDF-1.7\n"
