"""Answer code as normalised tokens and winnowed k-gram fingerprints (for the similarity report).

Two answers that differ only in names, formatting, comments, docstrings or the order of
independent statements and functions get the same token sequence:

- the code is parsed (never run) and its syntax tree written out in pre-order, one token per
  node: formatting, comments and parentheses are gone by construction;
- docstrings, other bare constants used as comments, ``pass`` and type annotations are dropped;
- every name the code binds itself (variables, arguments, its own functions and classes) and
  every unknown global becomes ``V``; builtins stay (``len``, ``sum``); imported names become
  the module path they stand for (``np.mean``, ``numpy.mean`` and ``from numpy import mean``
  are all ``numpy.mean``);
- in every block, statements that do not depend on each other (neither reads or writes a name
  the other writes) are put in a canonical order (a topological sort that takes the smallest
  statement first), so reordering independent statements or functions changes nothing.

Code that does not parse (a syntax error, text that is too deep to parse) is split into
lexical tokens with the same renaming; such answers only match other unparsable text well.

The tokens are hashed in overlapping k-grams (:data:`K` tokens each) and "winnowed"
(Schleimer, Wilkerson and Aiken, SIGMOD 2003): of every :data:`WINDOW` consecutive k-gram
hashes the smallest is kept as a fingerprint. Any run of ``K + WINDOW - 1`` tokens that two
answers share gives them at least one common fingerprint, which is what the class-wide index
in :mod:`.similarity.pairs` looks up.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import hashlib
import keyword
import re
from collections.abc import Sequence

from ..notebook import strip_nbgrader_markers

#: Tokens per k-gram.
K = 5
#: Winnowing window (k-gram hashes per window).
WINDOW = 4
#: Longest answer (characters, comment lines left out) that is analysed; the rest is cut. The
#: longest answer of the course's solutions is under 3 000 characters.
MAX_CHARS = 30_000
#: Longest answer (characters) read at all, comments included.
MAX_RAW_CHARS = 1_000_000
#: Most tokens kept of one answer.
MAX_TOKENS = 10_000
#: Longest block whose independent statements are put in canonical order (the sort is quadratic).
MAX_SORTED_BLOCK = 200

#: Names a notebook has without importing them (the setup cell imports numpy as np).
DEFAULT_GLOBALS = {"np": "numpy", "plt": "matplotlib.pyplot", "numpy": "numpy", "scipy": "scipy",
                   "math": "math", "pd": "pandas"}
_COMMENT_LINES = re.compile(r"^[ \t]*(?:#[^\n]*)?\n", re.MULTILINE)
_BUILTINS = frozenset(dir(builtins)) - {"_"}
_SKIPPED_FIELDS = frozenset({"ctx", "annotation", "returns", "type_comment", "type_params",
                             "type_ignores", "kind", "simple", "name", "asname", "level",
                             "is_async", "conversion", "id", "attr", "arg",
                             "module", "names"})
_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_BARRIERS = frozenset({ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom,
                       ast.Await, ast.Global, ast.Nonlocal})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclasses.dataclass
class Code:
    """One answer, normalised: what is shown, its tokens and their hashes.

    ``lines[i]`` is the line (1-based, in ``text``) that ``tokens[i]`` comes from; ``grams[i]``
    the hash of ``tokens[i:i + K]``; ``fingerprints`` the winnowed subset of ``grams``;
    ``where`` maps each k-gram hash to the positions where it starts.
    """

    text: str
    tokens: list[str]
    lines: list[int]
    grams: list[int]
    fingerprints: frozenset[int]
    parsed: bool
    note: str = ""
    where: dict[int, list[int]] = dataclasses.field(default_factory=dict, repr=False)


def normalise(source: str) -> Code:
    """The :class:`Code` of one answer cell's source (any string; never raises for bad code)."""
    text = source if isinstance(source, str) else ""
    note = ""
    if len(text) > MAX_RAW_CHARS:
        text = text[:MAX_RAW_CHARS]
        note = f"longer than {MAX_RAW_CHARS} characters: only the beginning was compared"
    text = strip_nbgrader_markers(text.replace("\r\n", "\n").replace("\r", "\n"))
    if len(text) > MAX_CHARS:  # padding with comments hides nothing; other padding is noted
        text = _COMMENT_LINES.sub("", text)
        if len(text) > MAX_CHARS:
            text = text[:MAX_CHARS].rpartition("\n")[0] or text[:MAX_CHARS]
            note = note or (f"longer than {MAX_CHARS} characters without its comments: only "
                            "the beginning was compared")
    try:
        pairs = _ast_tokens(text)
        parsed = True
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeError, TypeError):
        pairs = _lexical_tokens(text)
        parsed = False
        note = note or "not valid Python: compared as text"
    if len(pairs) > MAX_TOKENS:
        pairs = pairs[:MAX_TOKENS]
        note = note or f"more than {MAX_TOKENS} tokens: only the beginning was compared"
    tokens = [t for t, _ in pairs]
    lines = [line for _, line in pairs]
    grams = kgram_hashes(tokens)
    where = {}
    for q, h in enumerate(grams):
        where.setdefault(h, []).append(q)
    return Code(text, tokens, lines, grams, frozenset(winnow(grams)), parsed, note, where)


def kgram_hashes(tokens: Sequence[str], k: int = K) -> list[int]:
    """Hashes of every run of ``k`` consecutive tokens (one run of all tokens if fewer)."""
    if not tokens:
        return []
    if len(tokens) < k:
        return [_hash("\x1f".join(tokens))]
    return [_hash("\x1f".join(tokens[i:i + k])) for i in range(len(tokens) - k + 1)]


def winnow(hashes: Sequence[int], window: int = WINDOW) -> list[int]:
    """Robust winnowing: the minimum of every window of ``window`` hashes (rightmost on ties,
    each selection recorded once), as a list of hashes in order of selection."""
    if len(hashes) <= window:
        return [min(hashes)] if hashes else []
    selected, last = [], -1
    for start in range(len(hashes) - window + 1):
        if last < start:  # the previous minimum left the window: scan it again
            last = start
            for i in range(start + 1, start + window):
                if hashes[i] <= hashes[last]:
                    last = i
            selected.append(hashes[last])
        elif hashes[start + window - 1] <= hashes[last]:
            last = start + window - 1
            selected.append(hashes[last])
    return selected


def _hash(text):
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "big")


# ---------------------------------------------------------------- tokens from the syntax tree

def _ast_tokens(text):
    tree = ast.parse(text)
    return _Emitter(tree).block(tree.body, 1)


def _constant(value):
    if isinstance(value, bool) or value is None or value is Ellipsis:
        return repr(value)
    if isinstance(value, (int, float)):
        try:
            return f"N:{float(value)!r}"
        except OverflowError:
            return f"N:{value!r}"[:40]
    if isinstance(value, (str, bytes)):
        shown = value if isinstance(value, str) else value.decode("latin-1")
        if len(shown) <= 40:
            return f"S:{shown}"
        return f"S#{_hash(shown):016x}"
    return f"C:{type(value).__name__}"


class _Emitter:
    """Writes a parsed cell out as (token, line) pairs, names and order normalised."""

    def __init__(self, tree):
        self.bound, self.imported = set(), {}
        stack = [tree]
        while stack:
            node = stack.pop()
            stack += _children(node)
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                self.bound.add(node.id)
            elif isinstance(node, ast.arg):
                self.bound.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(node.name)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.bound.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.bound.update(node.names)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                self.bound.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                self.bound.add(node.rest)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imported[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.imported[top] = top
            elif isinstance(node, ast.ImportFrom):
                base = "." * (node.level or 0) + (node.module or "")
                for a in node.names:
                    if a.name != "*":
                        self.imported[a.asname or a.name] = f"{base}.{a.name}"

    def name(self, identifier: str) -> str:
        """A name as a token: V for the code's own names, a module path, or a builtin."""
        if identifier in self.bound:
            return "V"
        if identifier in self.imported:
            return self.imported[identifier]
        if identifier in _BUILTINS:
            return identifier
        return DEFAULT_GLOBALS.get(identifier, "V")

    def module_path(self, node: ast.expr) -> str | None:
        """``numpy.linalg.lstsq`` for an attribute chain on an imported module, else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.bound:
            return None
        base = self.imported.get(node.id) or DEFAULT_GLOBALS.get(node.id)
        return ".".join([base, *reversed(parts)]) if base else None

    # -- blocks: statements in canonical order
    def block(self, statements: list[ast.stmt], line: int) -> list[tuple[str, int]]:
        kept = [s for s in statements
                if not (isinstance(s, ast.Pass)
                        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
                        or (isinstance(s, ast.AnnAssign) and s.value is None))]
        emitted = [self.node(s, line) for s in kept]
        out, segment = [], []
        for s, tokens in zip(kept, emitted, strict=True):
            if _is_barrier(s):
                out += self._ordered(segment)
                out += tokens
                segment = []
            else:
                segment.append((s, tokens))
        return out + self._ordered(segment)

    def _ordered(self, segment):
        if len(segment) <= 1 or len(segment) > MAX_SORTED_BLOCK:
            return [pair for _, tokens in segment for pair in tokens]
        effects = [_effects(s) for s, _ in segment]
        keys = [tuple(t for t, _ in tokens) for _, tokens in segment]
        n = len(segment)
        before = [set() for _ in range(n)]   # statements that must stay before statement j
        for j in range(n):
            rj, wj = effects[j]
            for i in range(j):
                ri, wi = effects[i]
                if wi & (rj | wj) or ri & wj:
                    before[j].add(i)
        done, out = set(), []
        while len(done) < n:
            ready = [j for j in range(n) if j not in done and before[j] <= done]
            j = min(ready, key=lambda j: (keys[j], j))
            done.add(j)
            out += segment[j][1]
        return out

    # -- one node in pre-order
    def node(self, node: ast.AST, line: int) -> list[tuple[str, int]]:
        line = getattr(node, "lineno", line)
        out = []
        if isinstance(node, ast.Name):
            return [(self.name(node.id), line)]
        if isinstance(node, ast.Attribute):
            path = self.module_path(node)
            if path:
                return [(path, line)]
            return [("." + node.attr, line)] + self.node(node.value, line)
        if isinstance(node, ast.Constant):
            return [(_constant(node.value), line)]
        if isinstance(node, ast.arg):
            return [("V", line)]
        if isinstance(node, ast.keyword):
            return [(f"kw:{node.arg or '**'}", line)] + self.node(node.value, line)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            base = "." * (getattr(node, "level", 0) or 0) + (getattr(node, "module", "") or "")
            return [(f"import:{base + '.' if isinstance(node, ast.ImportFrom) else ''}{a.name}",
                     line) for a in node.names]
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return [(type(node).__name__, line)]
        if isinstance(node, ast.AnnAssign):
            out.append(("Assign", line))
            out += self.node(node.target, line) + self.node(node.value, line)
            return out
        if isinstance(node, (ast.BinOp, ast.AugAssign)):
            out.append((f"{type(node).__name__}:{type(node.op).__name__}", line))
        elif isinstance(node, ast.UnaryOp):
            out.append((f"UnaryOp:{type(node.op).__name__}", line))
        elif isinstance(node, ast.BoolOp):
            out.append((f"BoolOp:{type(node.op).__name__}", line))
        elif isinstance(node, ast.Compare):
            out.append(("Compare:" + ",".join(type(o).__name__ for o in node.ops), line))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(("def", line))
        elif isinstance(node, ast.ClassDef):
            out.append(("class", line))
        else:
            out.append((type(node).__name__, line))
        for field in node._fields:
            if field in _SKIPPED_FIELDS or field in ("op", "ops"):
                continue
            value = getattr(node, field, None)
            if field in _BLOCK_FIELDS and isinstance(value, list):
                out += self.block(value, line)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        out += self.node(item, line)
            elif isinstance(value, ast.AST):
                out += self.node(value, line)
        return out


def _children(node):
    """The child nodes of ``node`` (``ast.iter_child_nodes``, faster)."""
    out = []
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list:
            out += [v for v in value if isinstance(v, ast.AST)]
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _shallow_walk(node):
    """Nodes of a statement, without entering nested functions, lambdas or classes."""
    stack, out = [node], []
    while stack:
        current = stack.pop()
        out.append(current)
        if current is node or not isinstance(current, _SCOPES):
            stack += _children(current)
    return out


def _is_barrier(statement):
    """A statement that changes control flow: nothing moves across it."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return any(type(n) in _BARRIERS for n in _shallow_walk(statement))


def _base_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _effects(statement):
    """(names read, names written) by a statement, conservatively."""
    reads, writes = set(), set()
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        writes.add(statement.name)
        header = list(statement.decorator_list)
        if isinstance(statement, ast.ClassDef):
            header += statement.bases + [k.value for k in statement.keywords]
        else:
            header += statement.args.defaults + [d for d in statement.args.kw_defaults if d]
        for part in header:
            reads.update(n.id for n in ast.walk(part) if isinstance(n, ast.Name))
        return reads, writes
    for n in _shallow_walk(statement):
        if isinstance(n, ast.Name):
            (reads if isinstance(n.ctx, ast.Load) else writes).add(n.id)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load):
            base = _base_name(n)
            if base:
                writes.add(base)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            writes.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.AugAssign):
            base = _base_name(n.target)
            if base:
                reads.add(base)
                writes.add(base)
        elif isinstance(n, ast.NamedExpr):
            writes.add(n.target.id)
    if isinstance(statement, ast.Expr):
        # A bare call is made for its effect: it may change its receiver and its arguments.
        for n in _shallow_walk(statement):
            if isinstance(n, ast.Call):
                receiver = _base_name(n.func) if isinstance(n.func, ast.Attribute) else None
                if receiver:
                    writes.add(receiver)
                writes.update(_base_name(a) for a in n.args if _base_name(a))
    return reads, writes


# ---------------------------------------------------------------- tokens from text (fallback)

_LEXICAL = re.compile(r"""
    (?P<string>[rRbBuUfF]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
                |'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*"))
  | (?P<comment>\#[^\n]*)
  | (?P<number>\d[\w.]*)
  | (?P<name>[^\W\d]\w*)
  | (?P<newline>\n)
  | (?P<op>\*\*=?|//=?|==|!=|<=|>=|->|:=|<<|>>|[^\s\w])
""", re.VERBOSE)


def _lexical_tokens(text):
    """(token, line) pairs of text that does not parse: names renamed, comments dropped."""
    out, line = [], 1
    for m in _LEXICAL.finditer(text):
        kind, value = m.lastgroup, m.group()
        if kind == "newline":
            line += 1
            continue
        if kind == "string":
            body = value.lstrip("rRbBuUfF")
            out.append((_constant(body[1:-1] if len(body) >= 2 else body), line))
            line += value.count("\n")
        elif kind == "name":
            if keyword.iskeyword(value) or value in _BUILTINS:
                out.append((value, line))
            else:
                out.append((DEFAULT_GLOBALS.get(value, "V"), line))
        elif kind == "number":
            out.append((f"N:{value}", line))
        elif kind == "op":
            out.append((value, line))
    return out
