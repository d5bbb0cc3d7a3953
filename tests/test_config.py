"""The book's YAML readers (mlcourse_utils/config.py): _toc.yml and _config.yml.

Expected values come from the files parsed with yaml here, independently of the module.
"""

from __future__ import annotations

import pytest
import yaml

import assignment_support as sup
from mlcourse_utils import config


def test_toc_docnames_follow_the_toc_in_reading_order():
    toc = yaml.safe_load((sup.ROOT / "_toc.yml").read_text(encoding="utf-8"))
    names = config.toc_docnames(sup.ROOT / "_toc.yml")
    assert names[0] == toc["root"]
    files = [c["file"] for part in toc.get("parts", []) for c in part.get("chapters", [])
             if "file" in c]
    assert [n for n in names if n in files] == files  # chapters in the toc's order
    assert config.read_toc(sup.ROOT) == toc


def test_the_book_configuration_is_read_and_a_bad_file_is_an_error(tmp_path):
    assert config.read_config(sup.ROOT)["title"] == yaml.safe_load(
        (sup.ROOT / "_config.yml").read_text(encoding="utf-8"))["title"]
    (tmp_path / "_config.yml").write_text("- a list, not a mapping\n")
    with pytest.raises(ValueError, match="not a YAML mapping"):
        config.read_config(tmp_path)
