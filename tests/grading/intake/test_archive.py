"""A zip from an LMS read as data (grading/intake/archive.py): names never used as paths, every
member bounded, one bad member costs only itself."""

from __future__ import annotations

import io
import stat
import zipfile

import pytest

from mlcourse_utils.grading.intake import archive


def _zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            if isinstance(data, zipfile.ZipInfo):
                z.writestr(data, b"target")
            else:
                z.writestr(name, data)
    return path


def test_good_members_are_read_with_their_times(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("alice_1_2_mle.ipynb", (2026, 3, 2, 23, 5, 0)), b"{}")
        z.writestr("folder/", b"")
    members = list(archive.read_members(path))
    assert [(m.name, m.data, m.problem) for m in members] == [("alice_1_2_mle.ipynb", b"{}", "")]
    assert members[0].time.isoformat() == "2026-03-02T23:05:00"


@pytest.mark.parametrize("name", ["../escape.ipynb", "/etc/passwd", "a/../../b.ipynb",
                                  "C:/x.ipynb", "a\\..\\..\\b.ipynb"])
def test_names_that_leave_the_folder_are_refused(tmp_path, name):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as z:
        info = zipfile.ZipInfo("placeholder")
        info.filename = name  # ZipInfo cleans some names; write the hostile one as it is
        z.writestr(info, b"{}")
        z.writestr("ok_1_2_mle.ipynb", b"{}")
    found = {m.name: m for m in archive.read_members(path)}
    assert found["ok_1_2_mle.ipynb"].data == b"{}"
    bad = [m for m in found.values() if m.name != "ok_1_2_mle.ipynb"]
    assert len(bad) == 1 and bad[0].data is None and "outside" in bad[0].problem
    assert list(tmp_path.iterdir()) == [path]  # nothing was extracted anywhere


def test_a_zip_bomb_and_a_large_member_are_refused_per_member(tmp_path):
    path = _zip(tmp_path / "a.zip", [("bomb_1_2_mle.ipynb", b"\0" * (4 * 2**20)),
                                    ("ok_3_4_mle.ipynb", b"{}")])
    found = {m.name: m for m in archive.read_members(path)}
    assert found["bomb_1_2_mle.ipynb"].data is None
    assert "zip bomb" in found["bomb_1_2_mle.ipynb"].problem
    assert found["ok_3_4_mle.ipynb"].data == b"{}"
    big = _zip(tmp_path / "b.zip", [("big_1_2_mle.ipynb", bytes(range(256)) * 8192)])
    (member,) = archive.read_members(big, limit=2**20)
    assert member.data is None and "larger than 1 MB" in member.problem


def test_a_header_that_understates_the_size_reads_no_more_than_it_says(tmp_path):
    """The declared size bounds the read (a member cannot inflate past what its header says
    unnoticed: the CRC check fails and the member is refused)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        z.writestr("liar_1_2_mle.ipynb", b"x" * 1000)
    data = bytearray(buffer.getvalue())
    # Patch the sizes in the central directory (offset 24: compressed, 28: uncompressed)
    # and in the local header (offset 18 and 22) down to 10 bytes.
    central = data.rfind(b"PK\x01\x02")
    for offset in (central + 20, central + 24, 18, 22):
        data[offset:offset + 4] = (10).to_bytes(4, "little")
    path = tmp_path / "liar.zip"
    path.write_bytes(bytes(data))
    (member,) = archive.read_members(path)
    assert member.data is None or len(member.data) <= 10


def test_links_and_too_many_members(tmp_path):
    link = zipfile.ZipInfo("link_1_2_mle.ipynb")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    path = _zip(tmp_path / "a.zip", [("link_1_2_mle.ipynb", link)])
    (member,) = archive.read_members(path)
    assert member.data is None and "link" in member.problem
    many = _zip(tmp_path / "many.zip", [(f"s{i}_1_2_mle.ipynb", b"{}") for i in range(30)])
    with pytest.raises(ValueError, match="30 entries, more than the 20"):
        list(archive.read_members(many, max_members=20))


def test_not_a_zip_is_a_value_error(tmp_path):
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a zip file"):
        list(archive.read_members(tmp_path / "x.zip"))


def test_the_total_is_capped(tmp_path):
    path = _zip(tmp_path / "a.zip", [(f"s{i}_1_2_mle.ipynb", bytes(range(256)) * 4)
                                     for i in range(3)])
    members = list(archive.read_members(path, max_total=2500))
    assert [m.data is not None for m in members] == [True, True, False]
    assert "not read" in members[2].problem
