"""Code for the similarity tests and benchmark: disguised copies and random honest answers.

``disguise`` does what a student hiding a copy does (independently of the code under test):
renames every variable, argument and helper, rewrites or removes comments and docstrings,
swaps neighbouring statements that do not depend on each other, reorders functions and
reformats everything. ``random_answer`` writes a plausible, distinct answer for a signature.
"""

from __future__ import annotations

import ast
import builtins
import random

_KEEP = set(dir(builtins)) | {"np", "numpy", "scipy", "stats", "special", "linalg", "heapq",
                              "math", "warnings", "sys", "self"}


class _Renamer(ast.NodeTransformer):
    def __init__(self, keep, rng):
        self.keep, self.rng, self.names = keep, rng, {}

    def new(self, name):
        if name in self.keep:
            return name
        if name not in self.names:
            stem = self.rng.choice(["val", "tmp", "arr", "res", "q", "w8", "thing", "my"])
            self.names[name] = f"{stem}_{len(self.names)}{self.rng.choice('abcxyz')}"
        return self.names[name]

    def visit_Name(self, node):
        node.id = self.new(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.new(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.name = self.new(node.name)
        self.generic_visit(node)
        return node

    def visit_alias(self, node):  # `from scipy.special import xlogy as q_3x`
        bound = node.asname or node.name.split(".")[0]
        renamed = self.new(bound)
        if renamed != bound and "." not in node.name:
            node.asname = renamed
        elif renamed != bound:
            self.names[bound] = bound
        return node

    def visit_keyword(self, node):  # keyword names belong to the callee: keep them
        self.generic_visit(node)
        return node


def _reads_writes(stmt):
    reads, writes = set(), set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name):
            (reads if isinstance(n.ctx, ast.Load) else writes).add(n.id)
        if isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load):
            base = n
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                writes.add(base.id)
    return reads, writes


def _swap_independent(body, rng):
    """Swap neighbouring simple assignments that share no written name, here and there."""
    simple = (ast.Assign, ast.AugAssign, ast.Import, ast.ImportFrom)
    i = 0
    while i + 1 < len(body):
        a, b = body[i], body[i + 1]
        if isinstance(a, simple) and isinstance(b, simple):
            ra, wa = _reads_writes(a)
            rb, wb = _reads_writes(b)
            if not (wa & (rb | wb) or wb & ra) and rng.random() < 0.8:
                body[i], body[i + 1] = b, a
                i += 2
                continue
        i += 1
    for stmt in body:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                _swap_independent(inner, rng)


def _drop_docstrings(tree):
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and len(body) > 1):
            del body[0]


def disguise(source, keep=(), seed=0):
    """A copy of ``source`` as a student would hide it; names in ``keep`` (the task's function)
    are left alone."""
    rng = random.Random(seed)
    tree = ast.parse(source)
    _drop_docstrings(tree)
    _swap_independent(tree.body, rng)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            _swap_independent(node.body, rng)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(functions) > 1:  # helpers first or last: order of definitions does not matter
        others = [n for n in tree.body if not isinstance(n, ast.FunctionDef)]
        tree.body = others + functions[::-1]
    _Renamer(_KEEP | set(keep), rng).visit(tree)
    lines = []
    for k, line in enumerate(ast.unparse(tree).split("\n")):
        if line.strip().startswith("def "):
            indent = line[: len(line) - len(line.lstrip())]
            lines += ["", line, f'{indent}    """My own solution (written alone)."""']
            continue
        if k % 3 == 1 and line.strip() and not line.rstrip().endswith((",", "(", "[", "\\")):
            line += "    # step " + rng.choice(["one", "two", "see notes", "TODO check"])
        lines.append(line.replace(", ", " ,  ").replace(" = ", "=", 1))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- random honest answers

_NAMES = ["a", "b", "c", "acc", "total", "tmp", "result", "vals", "out", "m", "s", "z", "w",
          "part", "scale", "k", "norm", "buf", "value", "diff"]
_FUNCS = ["np.mean", "np.sum", "np.log", "np.exp", "np.sqrt", "np.abs", "np.max", "np.min",
          "np.cumsum", "np.sort", "np.var", "np.square", "np.log1p", "np.prod", "np.tanh",
          "np.atleast_1d", "np.ravel", "float", "len", "np.median", "np.diff", "np.argsort"]
_METHODS = [".sum()", ".mean()", ".max()", ".T", ".shape[0]", ".size", ".copy()", ".ravel()",
            ".min()", ".std()", ".cumsum()", ".reshape(-1)", ".astype(float)"]
_OPS = ["+", "-", "*", "/", "**"]


def _expr(rng, names, depth):
    choice = rng.random()
    if depth <= 0 or choice < 0.25:
        if rng.random() < 0.7:
            return rng.choice(names)
        return repr(rng.choice([0, 1, 2, 0.5, 1e-12, 3, 10, -1, 0.25]))
    if choice < 0.5:
        return f"{rng.choice(_FUNCS)}({_expr(rng, names, depth - 1)})"
    if choice < 0.65:
        return f"{rng.choice(names)}{rng.choice(_METHODS)}"
    if choice < 0.72:
        return f"{rng.choice(names)}[{rng.choice(['0', '-1', '1:', ':-1', '::2'])}]"
    return (f"({_expr(rng, names, depth - 1)} {rng.choice(_OPS)} "
            f"{_expr(rng, names, depth - 1)})")


def random_answer(function, args, seed):
    """A plausible answer for ``def function(*args)``: distinct for each seed."""
    rng = random.Random(seed)
    names = list(args)
    lines = [f"def {function}({', '.join(args)}):"]
    if rng.random() < 0.6:  # the idiom most answers start with
        lines += [f"    {a} = np.asarray({a}, dtype=float)" for a in args[:1]]
    for _ in range(rng.randint(2, 7)):
        kind = rng.random()
        target = rng.choice([n for n in _NAMES if n not in names] or _NAMES)
        if kind < 0.6 or len(names) < 2:
            lines.append(f"    {target} = {_expr(rng, names, 3)}")
            names.append(target)
        elif kind < 0.75:
            lines.append(f"    {rng.choice(names)} {rng.choice(_OPS[:4])}= "
                         f"{_expr(rng, names, 2)}")
        elif kind < 0.9:
            lines += [f"    if {_expr(rng, names, 1)} > {_expr(rng, names, 1)}:",
                      f"        {target} = {_expr(rng, names, 2)}",
                      "    else:",
                      f"        {target} = {_expr(rng, names, 2)}"]
            names.append(target)
        else:
            it = rng.choice(["i", "j", "idx"])
            lines += [f"    {target} = 0.0",
                      f"    for {it} in range(len({args[0]})):",
                      f"        {target} += {_expr(rng, names + [f'{args[0]}[{it}]'], 2)}"]
            names.append(target)
    returned = rng.sample(names[-3:], k=min(len(names), rng.randint(1, 2)))
    lines.append(f"    return {', '.join(returned)}")
    return "\n".join(lines) + "\n"
