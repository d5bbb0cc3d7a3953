"""The course wheel the website offers students: the package without the reference chapters.

Released notebooks import ``mlcourse_utils.grading`` (and some ``mlcourse_utils.datasets``), and
students check them with ``mlcourse check``; the website offers a wheel with exactly that, so
that no package index is needed and so that no download of the student site holds the body of
a function an assignment asks for. The wheel holds :func:`student_files` (the command line,
``mlcourse check`` and what it runs, the checks test cells call, data sets, plotting: the
modules at the root of ``grading/`` and a few outside it), not the seven chapter modules nor
the grader (``grading/``'s sub-packages); its version is the package's with the local label
``+student`` (its name: :func:`mlcourse_utils.course.student_wheel_name`, which the release
notebooks' header also gives), and it depends on the base install's packages
(``pyproject.toml``).

It is written with :mod:`zipfile` by the wheel specification (PEP 427: ``METADATA``, ``WHEEL``,
``entry_points.txt`` and ``RECORD`` with sha256 digests), offline and byte for byte the same
from the same sources (fixed timestamps and order). ``mlcourse build`` writes it into
``_build/wheel/``; the *Getting started* page links it, so Sphinx copies it into the site.
The full package, to run the chapters, is installed from the course repository.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tomllib
import zipfile
from pathlib import Path

from ..course import WHEEL_TAG, student_version, student_wheel_name

PACKAGE = Path(__file__).resolve().parents[1]
#: The repository whose pyproject.toml describes the package (an editable install or a clone).
REPOSITORY = PACKAGE.parent

#: Files of the package outside ``grading/`` that the student wheel holds (paths relative to the
#: package folder): the command line, the course catalogue, data sets and plotting.
OUTSIDE_GRADING = (
    "__init__.py",
    "__main__.py",
    "_imports.py",
    "_validation.py",
    "cli.py",
    "course.py",
    "datasets.py",
    "plotting.py",
)


def student_files(package: Path | str = PACKAGE) -> tuple[str, ...]:
    """The files of ``package`` that the student wheel holds (paths relative to it).

    :data:`OUTSIDE_GRADING`, then the modules at the root of ``grading/``: that root is the
    student layer (``mlcourse check`` and what it runs, the checks test cells call), and the
    grader lives in its sub-packages, so a module added to one never reaches a student.
    """
    root = Path(package) / "grading"
    return OUTSIDE_GRADING + tuple(f"grading/{p.name}" for p in sorted(root.glob("*.py")))

#: Where `mlcourse build` writes the wheel, relative to the book's root.
WHEEL_DIR = Path("_build") / "wheel"

_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip file can hold: reproducible bytes


def _project(repository: Path) -> dict:
    pyproject = repository / "pyproject.toml"
    if not pyproject.is_file():
        raise FileNotFoundError(f"the student wheel is built from the course repository, but "
                                f"{pyproject} does not exist")
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]


def _metadata(project: dict, version: str) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {version}",
             "Summary: The course tools for students of the Probabilistic Machine Learning "
             "course: mlcourse check, the test helpers and the data sets",
             f"Requires-Python: {project['requires-python']}"]
    lines += [f"Requires-Dist: {req}" for req in project["dependencies"]]
    return "\n".join(lines) + "\n\nThe student edition of mlcourse_utils (without the reference " \
        "implementations of the chapters): see the course website's Getting started page.\n"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_student_wheel(out_dir: Path | str, repository: Path | str = REPOSITORY) -> Path:
    """Write the student wheel into ``out_dir`` (created if needed); return its path.

    Only the files of :func:`student_files` are taken from ``repository/mlcourse_utils``, the
    name, Python requirement and dependencies from ``repository/pyproject.toml``. The file is
    replaced only when its bytes change (a rebuild of the website copies nothing new).
    """
    repository = Path(repository)
    project = _project(repository)
    version = student_version(project["version"])
    name = student_wheel_name(project["version"])
    dist_info = f"mlcourse_utils-{version}.dist-info"
    files = []
    for rel in student_files(repository / "mlcourse_utils"):
        source = repository / "mlcourse_utils" / rel
        files.append((f"mlcourse_utils/{rel}", source.read_bytes()))
    scripts = project.get("scripts", {})
    entry_points = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())
    files += [
        (f"{dist_info}/METADATA", _metadata(project, version).encode("utf-8")),
        (f"{dist_info}/WHEEL", ("Wheel-Version: 1.0\nGenerator: mlcourse_utils.book.wheel\n"
                                f"Root-Is-Purelib: true\nTag: {WHEEL_TAG}\n").encode()),
        (f"{dist_info}/entry_points.txt", entry_points.encode("utf-8")),
    ]
    licence = repository / "LICENSE"
    if licence.is_file():
        files.append((f"{dist_info}/LICENSE", licence.read_bytes()))
    record = [_record_line(path, data) for path, data in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode("utf-8")))

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / name
    if not target.is_file() or target.read_bytes() != buffer.getvalue():
        target.write_bytes(buffer.getvalue())
    for old in out_dir.glob("mlcourse_utils-*.whl"):  # wheels of earlier versions
        if old != target:
            old.unlink()
    return target
