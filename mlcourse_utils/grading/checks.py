"""The helpers test cells call to compare a student's answer with the expected value.

A test cell earns its points when it runs to the end without raising. These helpers raise
``AssertionError`` with a message that says in words what was expected; that message is what the
student reads in the feedback (never the test code). They accept harmless differences (a list
for a tuple, a Python float for a numpy scalar, a 0-d array for a number) and never take text for
a number. :func:`hidden_rng` is where every hidden test draws its random inputs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .protocol import RemoteError

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "Case",
    "check_close",
    "check_equal",
    "check_raises",
    "check_against_reference",
    "hidden_inputs",
    "hidden_rng",
    "RemoteError",
]

@dataclasses.dataclass
class Case:
    """One input for a hidden test: positional ``args``, ``kwargs`` and a ``label`` in words."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    label: str = ""


def _describe(value, limit=8):
    if isinstance(value, np.ndarray) and value.ndim > 0:
        flat = np.array2string(value.ravel()[:limit], precision=6, separator=", ")
        more = ", ..." if value.size > limit else ""
        return f"array of shape {value.shape} {flat[:-1]}{more}]"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.10g}"
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "..."


def _is_scalar(x):
    return isinstance(x, (int, float, np.number, bool, np.bool_)) or (
        isinstance(x, np.ndarray) and x.ndim == 0
    )


def _compare(actual, expected, what, rtol, atol, exact):
    """Raise AssertionError when ``actual`` does not match ``expected`` (structure-aware)."""
    if isinstance(expected, (tuple, list)) and not (
        isinstance(actual, np.ndarray) and not exact and _numeric_sequence(expected)
    ):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            n = len(expected)
            raise AssertionError(
                f"{what}: expected {n} values (a tuple or list), got {_describe(actual)}"
            )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _compare(a, e, f"{what}[{i}]", rtol, atol, exact)
        return
    if expected is None:
        if actual is not None:
            raise AssertionError(f"{what}: expected None, got {_describe(actual)}")
        return
    exp = np.asarray(expected)
    if exp.dtype.kind in "US" or exact:
        act = np.asarray(actual) if isinstance(actual, (list, tuple, np.ndarray)) else actual
        if np.shape(act) != exp.shape or not np.array_equal(np.asarray(act), exp):
            raise AssertionError(f"{what}: expected {_describe(expected)}, got {_describe(actual)}")
        return
    if isinstance(actual, (str, bytes, dict)) or actual is None or _has_text(actual):
        raise AssertionError(f"{what}: expected {_describe(expected)}, got {_describe(actual)}")
    try:
        act = np.asarray(actual, dtype=np.float64)
    except (TypeError, ValueError):
        raise AssertionError(
            f"{what}: expected numbers, got {_describe(actual)}"
        ) from None
    if act.shape != exp.shape:
        if exp.ndim == 0:
            raise AssertionError(f"{what}: expected a single number, got {_describe(actual)}")
        raise AssertionError(
            f"{what}: expected an array of shape {exp.shape}, got shape {act.shape}"
        )
    exp = exp.astype(np.float64)
    same_inf = np.isinf(exp) == np.isinf(act)
    close = np.isclose(act, exp, rtol=rtol, atol=atol, equal_nan=True)
    if not (np.all(close) and np.all(same_inf) and np.all(np.isnan(exp) == np.isnan(act))):
        if exp.ndim == 0:
            raise AssertionError(f"{what}: expected {_describe(expected)}, got {_describe(actual)}")
        bad = np.argwhere(~(close & same_inf))[0]
        idx = tuple(int(i) for i in bad)
        raise AssertionError(
            f"{what}: entry {idx if len(idx) > 1 else idx[0]} should be {exp[idx]:.10g}, "
            f"got {act[idx]:.10g}"
        )


def _has_text(value, depth=0):
    """Whether a value holds strings where numbers are expected (never converted to numbers)."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "USO" and (value.dtype.kind != "O" or any(
            _has_text(v, depth + 1) for v in value.ravel()[:1000]))
    if isinstance(value, (list, tuple)) and depth < 30:
        return any(_has_text(v, depth + 1) for v in value)
    return False


def _numeric_sequence(seq):
    return all(_is_scalar(v) for v in seq)


def check_close(actual: object, expected: npt.ArrayLike | None, what: str, *, rtol: float = 1e-6,
                atol: float = 1e-9) -> None:
    """Assert that ``actual`` matches ``expected`` within tolerances.

    ``expected`` may be a number, an array, or a tuple/list of those; ``actual`` may use a list
    where a tuple is expected, a Python float where a numpy scalar is expected, a 0-d array
    for a number. ``what`` describes the call in words, e.g. ``"gaussian_mle([1, 2, 3])"``.
    """
    _compare(actual, expected, what, rtol, atol, exact=False)


def check_equal(actual: object, expected: npt.ArrayLike | None, what: str) -> None:
    """Assert exact equality (integers, booleans, labels), with the same structure rules."""
    _compare(actual, expected, what, 0.0, 0.0, exact=True)


def check_raises(exc_type: type[BaseException], func: Callable[..., object], *args: Any,
                 what: str | None = None, **kwargs: Any) -> None:
    """Assert that ``func(*args, **kwargs)`` raises ``exc_type`` (or a subclass).

    Works for a local function (visible tests in Jupyter) and for the grader's proxy to a
    student's function (the error then arrives as a :class:`RemoteError`).
    """
    what = what or f"{getattr(func, '__name__', 'the function')}{_short_args(args)}"
    try:
        result = func(*args, **kwargs)
    except RemoteError as exc:
        if exc_type.__name__ in exc.mro:
            return
        raise AssertionError(
            f"{what} should raise {exc_type.__name__}, but raised {exc.exc_type}: {exc.message}"
        ) from None
    except exc_type:
        return
    except Exception as exc:  # noqa: BLE001
        raise AssertionError(
            f"{what} should raise {exc_type.__name__}, but raised {type(exc).__name__}: {exc}"
        ) from None
    raise AssertionError(
        f"{what} should raise {exc_type.__name__}, but returned {_describe(result)}")


def _short_args(args):
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            parts.append(f"<array {a.shape}>")
        else:
            r = repr(a)
            parts.append(r if len(r) <= 40 else r[:37] + "...")
    return "(" + ", ".join(parts) + ")"


def check_against_reference(student: Callable[..., Any], reference: Callable[..., Any],
                            cases: Iterable[Case], *, rtol: float = 1e-6, atol: float = 1e-9,
                            exact: bool = False,
                            compare: Callable[[Any, Any, str], object] | None = None) -> None:
    """Compare ``student(*case.args)`` with ``reference(*case.args)`` on every case.

    ``compare(actual, expected, what)`` replaces the default comparison when given (e.g. to
    compare an objective value instead of non-unique coefficients). The reference value is
    computed in the calling process, so in the grader it is out of the student's reach.
    """
    name = getattr(student, "__name__", "your function")
    for i, case in enumerate(cases):
        args = tuple(case.args)
        kwargs = dict(case.kwargs)
        expected = reference(*_copy(args), **_copy(kwargs))
        label = case.label or f"test input {i + 1}"
        what = f"{name} on {label}"
        try:
            actual = student(*_copy(args), **_copy(kwargs))
        except RemoteError as exc:
            raise AssertionError(f"{what} raised {exc.exc_type}: {exc.message}") from None
        if compare is not None:
            compare(actual, expected, what)
        elif exact:
            check_equal(actual, expected, what)
        else:
            check_close(actual, expected, what, rtol=rtol, atol=atol)


#: Seed material used when no grading secret is given (the instructor's own checks, `release`).
DEVELOPMENT_SECRET = b"mlcourse-development-seed"

_hidden_context = threading.local()


@contextlib.contextmanager
def hidden_inputs(secret: bytes | None, student: str) -> Iterator[None]:
    """Within this block, :func:`hidden_rng` draws from ``(secret, student, test_id)``.

    ``secret`` is bytes (None: the development seed, the same for every student). The grader
    enters it around one student's test cells; it is per thread, so parallel students differ.
    """
    previous = getattr(_hidden_context, "value", None)
    _hidden_context.value = (secret, str(student))
    try:
        yield
    finally:
        _hidden_context.value = previous


def hidden_rng(test_id: str) -> np.random.Generator:
    """The random generator a hidden test draws its inputs from.

    Seeded by HMAC-SHA256(secret, student id + test id): with a grading secret, every student
    (and every term) gets other inputs, and re-grading one student reproduces them; without one
    (the instructor's checks, ``mlcourse release``) a fixed development seed per test id.
    Edge cases stay fixed in the test cells; only the random inputs come from here.
    """
    secret, student = getattr(_hidden_context, "value", None) or (None, "")
    if secret is None:
        secret, student = DEVELOPMENT_SECRET, ""
    digest = hmac.new(secret, f"{student}\0{test_id}".encode(), hashlib.sha256).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def _copy(obj):
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, tuple):
        return tuple(_copy(v) for v in obj)
    if isinstance(obj, list):
        return [_copy(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _copy(v) for k, v in obj.items()}
    return obj
