"""The value of a string expression made only of constants (``"ex" + "pit"``), or None."""

from __future__ import annotations

import ast

_MAX_FOLDED = 500


def const_str(node: ast.AST, depth: int = 0) -> str | None:
    """The value of a string expression made only of constants, or None.

    Folds ``"a" + "b"``, ``"ab" * 2``, f-strings of constants, ``"sep".join([...])`` of
    constants, slices with constant bounds (``"tipxe"[::-1]``) and ``str.lower``/``upper``.
    """
    if depth > 30:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp):
        return _fold_operation(node, depth)
    if isinstance(node, ast.JoinedStr):
        return _fold_fstring(node, depth)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _fold_slice(node, depth)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        return _fold_method(node, depth)
    return None


def _fold_operation(node: ast.BinOp, depth: int) -> str | None:
    """``"a" + "b"`` and ``"ab" * 2`` (either way round) of constants, at most
    :data:`_MAX_FOLDED` characters."""
    if isinstance(node.op, ast.Add):
        left, right = const_str(node.left, depth + 1), const_str(node.right, depth + 1)
        return left + right if left is not None and right is not None \
            and len(left) + len(right) <= _MAX_FOLDED else None
    if isinstance(node.op, ast.Mult):
        for s, n in ((node.left, node.right), (node.right, node.left)):
            text = const_str(s, depth + 1)
            if text is not None and isinstance(n, ast.Constant) and type(n.value) is int \
                    and 0 <= n.value and len(text) * n.value <= _MAX_FOLDED:
                return text * n.value
    return None


def _fold_fstring(node: ast.JoinedStr, depth: int) -> str | None:
    """An f-string of constants (no format spec; ``!s`` at most)."""
    parts = []
    for value in node.values:
        if isinstance(value, ast.FormattedValue):
            if value.format_spec is not None or value.conversion not in (-1, 115):
                return None
            value = value.value
        text = const_str(value, depth + 1)
        if text is None:
            return None
        parts.append(text)
    return "".join(parts)


def _fold_slice(node: ast.Subscript, depth: int) -> str | None:
    """A constant sliced with constant bounds (``"tipxe"[::-1]``)."""
    text = const_str(node.value, depth + 1)
    bounds = []
    for b in (node.slice.lower, node.slice.upper, node.slice.step):
        if b is None:
            bounds.append(None)
        elif isinstance(b, ast.Constant) and type(b.value) is int:
            bounds.append(b.value)
        elif isinstance(b, ast.UnaryOp) and isinstance(b.op, ast.USub) \
                and isinstance(b.operand, ast.Constant) and type(b.operand.value) is int:
            bounds.append(-b.operand.value)
        else:
            return None
    if text is None or bounds[2] == 0:
        return None
    return text[slice(*bounds)]


def _fold_method(node: ast.Call, depth: int) -> str | None:
    """``"sep".join([...])`` of constants, and ``lower``/``upper``/``strip`` of a constant."""
    base = const_str(node.func.value, depth + 1)
    if base is None:
        return None
    if node.func.attr == "join" and len(node.args) == 1 \
            and isinstance(node.args[0], (ast.List, ast.Tuple)):
        items = [const_str(e, depth + 1) for e in node.args[0].elts]
        if all(i is not None for i in items):
            joined = base.join(items)
            return joined if len(joined) <= _MAX_FOLDED else None
    if node.func.attr in ("lower", "upper", "strip") and not node.args:
        return getattr(base, node.func.attr)()
    return None
