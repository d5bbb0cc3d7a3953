"""The program that runs a student's notebook inside the grading sandbox.

The grader starts it as ``python -I -c <this file's text> READ_FD WRITE_FD MODE`` inside fresh
namespaces and a minimal root, as an unprivileged user (see ``isolation.py``), which runs
:func:`main`; importing the module only defines it. Its first act is to install a seccomp
filter; then it executes the cells it is sent and calls answer functions on the inputs it is
sent, and answers with plain data, each reply carrying its request's id. It must not import
``mlcourse_utils``: it only uses the standard library, numpy and IPython (with its traitlets;
imported by :func:`main` after the filter, so that every thread they start inherits it).

Nothing here is trusted: the student's code runs in this process and may change anything in it,
including this loop. The grader therefore treats every byte that comes back as untrusted data,
with deadlines and size limits, and decides every verdict in its own process.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import platform
import struct
import sys
import warnings

# ---------------------------------------------------------------- seccomp, before anything else
# A filter that every process and thread started from here inherits and cannot remove: no new
# namespaces (a nested user namespace would hand out capabilities), no mounts, no ptrace of a
# neighbour, no kernel keyrings, modules, BPF or io_uring, and no new program (execve: a fresh
# Python would run without the watch on forbidden calls). The process has no capabilities and
# runs as an unprivileged user already; this closes the doors that stay open to such a user.
# No file-change notifications either (inotify, fanotify, and dnotify's fcntl F_NOTIFY): they
# work on files, not mounts, so a watch on the Python environment, which every sandbox shares
# read-only, would see another student's sandbox open and read it.

_ERRNO, _ALLOW, _KILL = 0x00050000, 0x7FFF0000, 0x80000000
_EPERM, _ENOSYS = 1, 38
_F_NOTIFY = 1026
_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_SYSCALLS = {  # (audit arch, clone, clone3, denied syscall numbers)
    "x86_64": (0xC000003E, 56, 435, [
        272, 308, 165, 166, 155, 161, 101, 310, 311, 250, 248, 249, 321, 298, 246, 320, 175, 313,
        176, 304, 303, 323, 167, 168, 169, 163, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442,
        135, 179, 164, 227, 159, 305, 103, 170, 171, 172, 173, 134, 153, 59, 322,  # execve(at)
        253, 254, 294, 300, 301]),  # inotify_init, _add_watch, _init1, fanotify_init, _mark
    "aarch64": (0xC00000B7, 220, 435, [
        97, 268, 40, 39, 41, 51, 117, 270, 271, 219, 217, 218, 280, 241, 104, 294, 105, 273, 106,
        265, 264, 282, 224, 225, 142, 89, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442, 92,
        60, 170, 112, 116, 161, 162, 171, 266, 58, 221, 281,  # execve, execveat
        26, 27, 262, 263]),  # inotify_init1, inotify_add_watch, fanotify_init, fanotify_mark
}


def _install_seccomp(fds):
    """Install the filter (classic BPF through prctl); returns False where unsupported.
    ``fds``: the protocol's descriptors, which it keeps from being closed or replaced."""
    table = _SYSCALLS.get(platform.machine())
    if table is None or sys.platform != "linux":
        return False
    arch, clone, clone3, denied = table
    prog = []

    def op(code, k, jt=0, jf=0):
        prog.append((code, jt, jf, k))

    LD, JEQ, JSET, JGE, RET = 0x20, 0x15, 0x45, 0x35, 0x06
    op(LD, 4)                                   # seccomp_data.arch
    op(JEQ, arch, 1, 0)
    op(RET, _KILL)                              # another ABI (e.g. 32-bit calls): refuse
    # The protocol's descriptors can be neither closed nor replaced (the grader's record of
    # forbidden calls travels on them): close, dup2 and dup3 onto them, close_range over them.
    close_, dups, close_range = (3, (33, 292), 436) if arch == 0xC000003E else (57, (24,), 436)
    fcntl = 72 if arch == 0xC000003E else 25
    for fd in fds:
        for nr, offset in ((close_, 16), *((d, 24) for d in dups)):
            op(LD, 0)
            op(JEQ, nr, 0, 3)
            op(LD, offset)                      # the descriptor argument (low 32 bits)
            op(JEQ, fd, 0, 1)
            op(RET, _ERRNO | _EPERM)
    if fds:
        op(LD, 0)
        op(JEQ, close_range, 0, 3)
        op(LD, 16)
        op(JGE, max(fds) + 1, 1, 0)
        op(RET, _ERRNO | _EPERM)
    op(LD, 0)
    op(JEQ, fcntl, 0, 3)
    op(LD, 24)                                  # fcntl's command
    op(JEQ, _F_NOTIFY, 0, 1)
    op(RET, _ERRNO | _EPERM)                    # dnotify: a watch on a folder
    op(LD, 0)                                   # seccomp_data.nr
    if arch == 0xC000003E:
        op(JGE, 0x40000000, 0, 1)               # the x32 ABI
        op(RET, _ERRNO | _EPERM)
    for nr in denied:
        op(JEQ, nr, 0, 1)
        op(RET, _ERRNO | _EPERM)
    op(JEQ, clone3, 0, 1)
    op(RET, _ERRNO | _ENOSYS)                   # libc falls back to clone, checked below
    op(JEQ, clone, 0, 3)
    op(LD, 16)                                  # clone's flags (low 32 bits of args[0])
    op(JSET, _NS_FLAGS, 0, 1)
    op(RET, _ERRNO | _EPERM)
    op(RET, _ALLOW)

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                    ("k", ctypes.c_uint)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    filters = (SockFilter * len(prog))(*[SockFilter(*ins) for ins in prog])
    fprog = SockFprog(len(prog), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        return False
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) == 0


#: Set by :func:`main`: whether the filter holds, the protocol's pipes, numpy, the shell.
SECCOMP = False
_in = _out = np = shell = None


def _read_exact(n):
    chunks = []
    while n:
        chunk = _in.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def receive() -> dict[str, object]:
    (n,) = struct.unpack(">I", _read_exact(4))
    return json.loads(_read_exact(n))


def send(obj: dict[str, object]) -> None:
    payload = json.dumps(obj, allow_nan=False).encode()
    data = memoryview(struct.pack(">I", len(payload)) + payload)
    while data:
        data = data[_out.write(data):]


class _Blocker:
    """Without namespaces the real package is on disk; block its import and report the attempt.
    (A determined student can remove this hook; see docs/grading-security.md, "Limits".)"""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "mlcourse_utils" or name.startswith("mlcourse_utils."):
            send({"event": "delegation"})
            raise ImportError(
                "mlcourse_utils is not available while your notebook is graded: "
                "answers must not use the reference implementation"
            )
        return None


_ALLOWED_KINDS = "biufU"


def encode(value: object, depth: int = 0) -> object:
    """Plain data only: numbers, strings, None, lists, tuples, str-keyed dicts, numeric arrays."""
    if depth > 20:
        raise TypeError("the returned value is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if np.isfinite(v) else {"$f": repr(v)}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, tuple):
        return {"$t": [encode(v, depth + 1) for v in value]}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("returned dictionaries must have string keys")
        return {"$d": {k: encode(v, depth + 1) for k, v in value.items()}}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _ALLOWED_KINDS:
            raise TypeError(f"returned an array of dtype {value.dtype}; return numbers")
        arr = np.asarray(value, order="C")  # (ascontiguousarray would turn 0-d into 1-d)
        if arr.dtype.kind in "biuf":
            arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        return {"$a": base64.b64encode(arr.tobytes()).decode(), "dtype": arr.dtype.str,
                "shape": list(arr.shape)}
    if isinstance(value, complex):
        raise TypeError("returned a complex number; return real numbers")
    raise TypeError(
        f"returned an object of type {type(value).__name__}; return numbers, strings, "
        "tuples/lists or numpy arrays"
    )


def decode(obj: object) -> object:
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    if isinstance(obj, dict):
        if "$t" in obj:
            return tuple(decode(v) for v in obj["$t"])
        if "$f" in obj:
            return float(obj["$f"])
        if "$d" in obj:
            return {k: decode(v) for k, v in obj["$d"].items()}
        if "$a" in obj:
            data = base64.b64decode(obj["$a"])
            return np.frombuffer(data, dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
    return obj


#: Warnings kept per request, as text (a loop that warns a million times keeps the first).
MAX_WARNINGS = 20


class _Warnings(warnings.catch_warnings):
    """The warnings of one request: each is recorded, never printed and never an error (the
    filter is "always", whatever the notebook set); the first :data:`MAX_WARNINGS` are kept as
    text. The grader's floating-point error mode never reaches the student's code: a test's
    ``np.errstate(..., "raise")`` holds in the grader's process only, so a warning inside an
    answer is a warning, shown in the feedback, and never costs points."""

    def __enter__(self):
        super().__enter__()
        warnings.simplefilter("always")
        self.texts = []
        warnings.showwarning = self._keep
        return self.texts

    def _keep(self, message, category, filename, lineno, file=None, line=None):
        if len(self.texts) < MAX_WARNINGS:
            self.texts.append(f"{category.__name__}: {message}"[:300])


def _exception_info(exc):
    return {
        "exc_type": type(exc).__name__,
        "exc_mro": [c.__name__ for c in type(exc).__mro__],
        "message": str(exc)[:1000],
    }


# ---------------------------------------------------------------- watching forbidden calls
# The grader's first request (before any student code runs) names the calls an assignment
# forbids, and the library functions allowed to call them inside. Every forbidden function is
# made to ask an audit hook (which Python never lets anyone remove or list) before it runs: the
# hook reports the call at once on the reply pipe and hands the stand-in the original, which only
# the hook holds. What is reported cannot be taken back: the grader records it as it arrives.
#
# A Python function is changed in place: its code becomes a short trampoline (below) and its
# original code moves into a copy that only the hook holds. Every road to the function (a
# module's namespace, numpy's registry of array functions and a dispatcher's ``_implementation``,
# ``__wrapped__``, a decorator's closure) leads to the trampoline. A method shared by several
# classes (``rv_continuous.pdf``) is forbidden only for the instances of the forbidden class. A
# compiled callable (a numpy ufunc such as ``scipy.special.expit``) cannot be changed: a stand-in
# replaces it in every module, and in the tables its package keeps.
#
# The trampoline calls the original itself, holding it only on its evaluation stack: no frame's
# variables lead to it, and the hook's frame is gone while the original runs. The hook accepts
# only events raised by the trampoline's own code, so a forged event gets nothing. State is kept
# per thread: a call made inside a forbidden call is that call's business, but a forbidden call
# still running in any thread when a test ends counts for that test. A forked child reports
# every forbidden call it makes, nested or not.
#
# The watch imports nothing (scipy.stats alone takes a second, in every sandbox): a call whose
# module is not loaded yet is resolved when that module is first imported. An import hook, first
# in ``sys.meta_path``, wraps the loader of every module a watched name may live in; when such a
# module has run, and before the import returns to the code that asked for it, the names it
# holds are changed. Modules under a forbidden prefix are changed whole, private names included.
#
# What could reach the hook's state, or run a copy of an original, is refused or reported:
# running a copy of a forbidden function's code (a module's source executed again, reloaded or
# loaded from its file; a function made from its code) is refused and reported as that call;
# code compiled under a library file's name, the garbage collector's object lists, frames seen
# while a forbidden call runs (or taken directly by student code at any time), tracing,
# profiling and signal handlers (which are handed frames), ctypes' access to memory and to
# Python's C API, a module holding a stand-in imported again, and changes to the import hook
# are reported. A new program (a fresh Python has no watch) cannot start: the seccomp filter
# refuses ``execve``; without the filter, starting one is reported.

_GC_EVENTS = frozenset({"gc.get_referrers", "gc.get_referents", "gc.get_objects"})
_FRAME_EVENTS = frozenset({"sys._getframe", "sys._current_frames", "sys._current_exceptions"})
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_PROGRAM_EVENTS = frozenset({"subprocess.Popen", "os.exec", "os.posix_spawn", "os.system",
                             "os.spawn", "pty.spawn", "os.fork_exec"})
_CTYPES_MEMORY = frozenset({"ctypes.cdata", "ctypes.cdata/buffer", "ctypes.string_at",
                            "ctypes.wstring_at", "ctypes.PyObj_FromPtr"})
#: C functions that read or copy memory at an address (looked up through ctypes).
_MEMORY_SYMBOLS = frozenset({"memcpy", "memmove", "mempcpy", "memccpy", "bcopy", "memchr",
                             "memrchr", "memmem", "memcmp", "strcpy", "strncpy", "stpcpy",
                             "strlen", "process_vm_readv", "process_vm_writev"})
#: The special methods of a forbidden class that do its work (making one, calling it, stepping
#: through it); the others (operators, descriptors, hooks the interpreter calls by itself) are
#: not watched, so that nobody is charged for what another library's code set off.
_WORKING_SPECIALS = frozenset({"__init__", "__new__", "__call__", "__iter__", "__next__",
                               "__getitem__", "__enter__", "__exit__", "__aiter__", "__anext__",
                               "__await__"})
#: Callable objects that are compiled (replaced by a stand-in, since they cannot be changed).
_COMPILED_TYPES = ("ufunc", "builtin_function_or_method", "_ArrayFunctionDispatcher")
#: Helpers that hand their caller frames (their caller is who takes the frame).
_FRAME_HELPERS = (("inspect", "currentframe"), ("inspect", "stack"), ("inspect", "trace"),
                  ("inspect", "getouterframes"), ("inspect", "getinnerframes"),
                  ("traceback", "walk_stack"), ("traceback", "walk_tb"),
                  ("logging", "currentframe"))

#: The trampoline, the stand-in's code: ``_audit`` becomes ``sys.audit`` and ``_index`` the
#: stand-in's number (constants: nothing the student can rebind); the original travels from the
#: hook through ``box`` to the evaluation stack. Free variables match the original's closure.
_TRAMPOLINE = """
def _outer({free}):
    def _forbidden_call(*args, **kwargs):
        if 0:
            ({free},)
        _audit = "__audit__"
        _index = -70001
        box = []
        _audit("mlcourse.forbidden", _index, args, kwargs, box)
        if not box:
            raise RuntimeError("this function is not available while the notebook is graded")
        try:
            return box.pop()(*args, **kwargs)
        except BaseException as exc:
            _audit("mlcourse.raised", _index, exc)
            raise
        finally:
            _audit("mlcourse.return", _index)
    return _forbidden_call.__code__
"""

#: The import hook (a finder first in ``sys.meta_path`` and the loader it wraps), made from
#: constants only: ``"__audit__"`` and the others become the objects they name.
_IMPORT_HOOK = """
class Loader:
    __slots__ = ("loader",)

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def __getattr__(self, name):
        _getattr = "__getattr__"
        return _getattr(self.loader, name)

    def exec_module(self, module):
        _audit = "__audit__"
        _audit("mlcourse.loading", module)
        try:
            self.loader.exec_module(module)
        finally:
            _audit("mlcourse.loaded", module)


class Finder:
    __slots__ = ()

    def find_spec(self, name, path=None, target=None):
        _audit = "__audit__"
        _getattr = "__getattr__"
        _hasattr = "__hasattr__"
        _loader = "__L__"
        box = []
        _audit("mlcourse.find", name, box)
        if not box:
            return None
        for other in "__finders__":
            find = _getattr(other, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is None:
                continue
            if spec.loader is not None and _hasattr(spec.loader, "exec_module"):
                spec.loader = _loader(spec.loader)
            return spec
        return None
"""


class _Refused(RuntimeError):
    """A copy of a forbidden function's code was about to run (the watch refuses it)."""


def _install_monitor(entries, fd, programs_blocked=False):  # noqa: C901
    """Watch the calls ``entries`` (qualified names or module prefixes), reporting on the
    descriptor ``fd``; ``programs_blocked``: the seccomp filter refuses new programs. Returns
    ``(number of functions watched now, names watched on import)``."""
    import inspect
    import mmap
    import types
    from _thread import get_ident

    write, pack, audit, getframe = os.write, struct.pack, sys.audit, sys._getframe
    gettrace, getprofile = sys.gettrace, sys.getprofile
    FunctionType, CodeType, ModuleType = types.FunctionType, types.CodeType, types.ModuleType
    class_vars = type.__dict__["__dict__"].__get__   # (never a class's own __getattribute__)
    class_mro = type.__dict__["__mro__"].__get__
    module_vars = ModuleType.__dict__["__dict__"].__get__
    set_traceback = BaseException.__dict__["__traceback__"].__set__
    set_context = BaseException.__dict__["__context__"].__set__
    set_cause = BaseException.__dict__["__cause__"].__set__
    missing = object()

    # Each watched function has a number: its label (None: it depends on the receiver), the
    # original the stand-in calls, the stand-in's code, {id(class): label} for a method shared
    # with other classes, and its kind ("function", "compiled", or "signal" for signal.signal).
    labels, originals, codes, receivers, kinds = [], [], [], [], []
    code_index = {}        # id(a stand-in's code) -> its number
    done = {}              # id(an original) -> its number
    kept = []              # what is watched (kept alive: its id stays unique)
    replacing = {}         # id(compiled original) -> (original, stand-in): not replaced yet
    stand_ins = {}         # id(compiled original) -> its stand-in
    prints = {}            # a code's shape -> [(original code, label)]: copies are refused
    raw_prints = set()     # the bytecode of every watched original (long enough to be unique)
    faces = []             # number -> ids of the objects that are that function (a dispatcher)
    baselines = {}         # id(a library module's namespace) -> a copy, as it was loaded
    library_functions = {}  # id(function) -> whether its code is a library's (until changed)
    student_codes, student_kept = set(), []  # code run or made from text by student code
    packages = set()       # packages whose tables may hold a compiled original
    patched_classes = {}   # id(class) -> label (every method watched)
    watched_modules = set()  # modules that hold a stand-in (a re-import would undo it)
    patched_modules = set()
    prefixes = []          # module prefixes, and every name not resolved yet
    lazy = {}              # entry -> its parts: not resolved yet (its module is not loaded)
    triggers = set()       # the modules whose import may resolve an entry of `lazy`
    roots = set()          # top-level packages of `prefixes` (imports the hook must see first)
    pending = set()        # imported without the import hook: changed at the next event
    listings = {}          # folder -> its file names (may a package hold a submodule?)
    loaded_files = set()   # source files of the modules loaded (a second run is a copy)
    # per thread: the forbidden calls running ([label, counted] or None), inside the hook,
    # reading frames for the hook, wrapped imports running
    stacks, inside, own, loading = {}, set(), set(), {}
    reported = set()
    child = [False]        # a forked child: every forbidden call is reported
    page = mmap.mmap(-1, 8)  # the request number, shared with forked children

    def clean(text):
        return "".join(c for c in str(text)[:200] if c.isalnum() or c in "._- ")

    def emit(kind, key, text):
        mark = (kind, text, bytes(page[:8])) if child[0] else (kind, text)
        if mark in reported:
            return
        reported.add(mark)
        data = f'{{"event": "{kind}", "{key}": "{clean(text)}"}}'.encode()
        frame = pack(">I", len(data)) + data
        while frame:
            frame = frame[write(fd, frame):]

    def monitor(what):
        emit("monitor", "what", what)

    # ------------------------------------------------ making stand-ins

    templates = {}
    constants = {"__audit__": audit, "__getattr__": getattr, "__hasattr__": hasattr}

    def trampoline_code(nfree, index, name, qualname, filename, firstlineno):
        template = templates.get(nfree)
        if template is None:
            free = ", ".join(f"v{i}" for i in range(nfree))
            text = _TRAMPOLINE.replace("{free}", free) if nfree else \
                _TRAMPOLINE.replace("        if 0:\n            ({free},)\n", "") \
                .replace("{free}", "")
            namespace = {}
            exec(compile(text, "<mlcourse watch>", "exec"), namespace)
            template = templates[nfree] = namespace["_outer"](*range(nfree))
        consts = tuple(audit if c == "__audit__" else index if c == -70001 else c
                       for c in template.co_consts)
        return template.replace(co_consts=consts, co_name=name, co_qualname=qualname,
                                co_filename=filename, co_firstlineno=firstlineno)

    def shape(code):
        return (code.co_argcount, code.co_kwonlyargcount, code.co_nlocals, code.co_stacksize,
                len(code.co_names), code.co_flags)

    def fingerprint(code, label):
        """Refuse copies of ``code`` (and of the code objects it holds). Code a library made
        from text (a namedtuple's ``__new__``, a dataclass's ``__init__``) is alike for every
        class of the same shape: not a copy of anything."""
        if code.co_filename.startswith("<"):
            return
        todo, seen = [code], 0
        while todo and seen < 2000:
            c = todo.pop()
            seen += 1
            prints.setdefault(shape(c), []).append((c, label))
            todo.extend(k for k in c.co_consts if type(k) is CodeType)

    class FunctionLike:
        """What inspect reads of a function, for its signature (never the original itself)."""

        def __init__(self, **attributes):
            self.__dict__.update(attributes)

        def __call__(self):  # (inspect wants something callable; it is never called)
            raise TypeError("not a function")

    class LazySignature(inspect.Signature):
        """An original's signature, worked out when first asked (``inspect.signature``)."""

        __slots__ = ("_of",)

        def __init__(self, of):  # noqa: D107 (of: a function-like namespace, never the original)
            self._of = of

        @property
        def _parameters(self):
            return inspect._signature_from_function(inspect.Signature, self._of).parameters

        @property
        def _return_annotation(self):
            return inspect._signature_from_function(inspect.Signature,
                                                    self._of).return_annotation

        def replace(self, **changes):
            return inspect.Signature(list(self.parameters.values()),
                                     return_annotation=self.return_annotation).replace(**changes)

    def add(original, label, receiver, kind, code, face):
        index = len(originals)
        faces.append({id(face)})
        labels.append(label)
        originals.append(original)
        codes.append(code)
        receivers.append(receiver)
        kinds.append(kind)
        code_index[id(code)] = index
        return index

    def watch_function(fn, label, receiver=None, depth=0):
        """Make the Python function ``fn`` a stand-in, in place. ``receiver``: the class whose
        instances alone make a call of it forbidden (a method shared by several classes)."""
        index = done.get(id(fn))
        if index is None:
            code = fn.__code__
            closure = fn.__closure__
            if len(code.co_freevars) != len(closure or ()):
                return None
            original = FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
            original.__kwdefaults__ = fn.__kwdefaults__
            original.__qualname__ = fn.__qualname__
            tramp = trampoline_code(len(code.co_freevars), len(originals), code.co_name,
                                    code.co_qualname, code.co_filename, code.co_firstlineno)
            if "__signature__" not in fn.__dict__:
                fn.__signature__ = LazySignature(FunctionLike(
                    __name__=fn.__name__, __code__=code, __defaults__=fn.__defaults__,
                    __kwdefaults__=fn.__kwdefaults__, __annotations__=fn.__annotations__))
            try:
                fn.__code__ = tramp
            except (AttributeError, TypeError, ValueError):
                return None
            index = add(original, label if receiver is None else None,
                        None if receiver is None else {}, "function", tramp, fn)
            done[id(fn)] = index
            kept.append(fn)
            fingerprint(code, label)
            if len(code.co_code) >= 48 and not code.co_filename.startswith("<"):
                raw_prints.add(code.co_code)
            if depth < 3:  # the original inside a decorator: its __wrapped__ or its closure
                inner = fn.__dict__.get("__wrapped__")
                cells = [c.cell_contents for c in closure or () if _filled(c)]
                for other in ([inner] if inner is not None else []) + cells:
                    if type(other) is FunctionType and other is not fn and \
                            (other is inner or other.__name__ == fn.__name__):
                        watch_function(other, label, receiver, depth + 1)
        if receiver is not None and receivers[index] is not None:
            receivers[index].setdefault(id(receiver), label)
            kept.append(receiver)
        elif receiver is None:
            labels[index], receivers[index] = label, None
        return index

    def _filled(cell):
        try:
            cell.cell_contents  # noqa: B018
        except ValueError:
            return False
        return True

    def watch_compiled(original, label, kind="compiled"):
        """A stand-in for a compiled callable, replacing it wherever it is found."""
        index = done.get(id(original))
        if index is not None:
            return index
        name = str(getattr(original, "__name__", "") or label.rpartition(".")[2])
        code = trampoline_code(0, len(originals), name, name, "<mlcourse watch>", 1)
        stand_in = FunctionType(code, {"__builtins__": __builtins__}, name)
        for attr in ("__doc__", "__module__"):
            try:
                setattr(stand_in, attr, getattr(original, attr))
            except (AttributeError, TypeError):
                pass
        index = add(original, label, None, kind, code, original)
        faces[index].add(id(stand_in))
        done[id(original)] = index
        kept.append(stand_in)
        replacing[id(original)] = (original, stand_in)
        stand_ins[id(original)] = stand_in
        if type(original).__name__ == "ufunc":  # (scipy.special keeps tables of its ufuncs)
            packages.add(".".join(label.split(".")[:2]))
            # A ufunc's methods and attributes stay where code finds them (np.logaddexp.reduce
            # in a task that may use it); a call through a method is the same forbidden call.
            for attr in ("nin", "nout", "nargs", "ntypes", "types", "identity", "signature"):
                try:
                    setattr(stand_in, attr, getattr(original, attr))
                except (AttributeError, TypeError):
                    pass
            for method in ("reduce", "accumulate", "reduceat", "outer", "at"):
                bound = getattr(original, method, None)
                if bound is not None:
                    watch_compiled(bound, label, kind)
                    setattr(stand_in, method, stand_ins[id(bound)])
        return index

    def watch_callable(value, label):
        if type(value) is FunctionType:
            return watch_function(value, label)
        implementation = getattr(value, "_implementation", None) \
            if type(value).__name__ == "_ArrayFunctionDispatcher" else None
        if type(implementation) is FunctionType:  # numpy.cov: the dispatcher stays
            index = watch_function(implementation, label)
            if index is not None:
                faces[index].add(id(value))
                kept.append(value)
            return index
        if type(value).__name__ in _COMPILED_TYPES:
            return watch_compiled(value, label)
        return None

    def functions_of(cls):
        """The functions a class defines itself: {name: function}."""
        found = {}
        for attr, value in list(class_vars(cls).items()):
            if type(value) in (staticmethod, classmethod):
                value = value.__func__
            if type(value) is FunctionType:
                found[attr] = value
        return found

    def watch_class(cls, label):
        """Every method a class defines, and its construction."""
        if patched_classes.get(id(cls)) is not None:
            return
        patched_classes[id(cls)] = label
        for attr, fn in functions_of(cls).items():
            if attr in ("__init__", "__new__", "__call__"):
                index = watch_function(fn, label)
                if index is not None and attr != "__call__":
                    faces[index].add(id(cls))  # (code that names the class makes one)
            elif attr in _WORKING_SPECIALS or not (attr.startswith("__") and
                                                   attr.endswith("__")):
                watch_function(fn, f"{label}.{attr}")

    def frozen_class(cls):
        """``multivariate_normal_frozen`` for ``multivariate_normal_gen`` (scipy's names)."""
        name = class_vars(cls).get("__module__")
        module = sys.modules.get(name) if type(name) is str else None
        if module is None or not cls.__name__.endswith("_gen"):
            return None
        frozen = module_vars(module).get(cls.__name__[:-4] + "_frozen")
        return frozen if isinstance(frozen, type) else None

    def watch_methods(owner, entry, only=None):
        """The methods of a forbidden object (all of them, or ``only`` and its private
        implementation ``_only``), on its class and on its frozen class; a method a base class
        shares with other classes is forbidden for this object's class only."""
        for cls in (type(owner), frozen_class(type(owner))):
            if cls is None:
                continue
            seen = set()
            for base in class_mro(cls):
                if base is object:
                    continue
                for attr, fn in functions_of(base).items():
                    if attr in seen:
                        continue
                    seen.add(attr)
                    if only is not None and attr not in (only, "_" + only):
                        continue
                    if only is None and attr.startswith("__") and attr.endswith("__") and \
                            attr not in ("__call__", "__init__"):
                        continue
                    label = entry if only is not None or attr in ("__call__", "__init__") \
                        else f"{entry}.{attr}"
                    watch_function(fn, label, None if base is cls else cls)

    # ------------------------------------------------ where the watched names live

    def public(name):
        parts = name.split(".")
        return ".".join(p for i, p in enumerate(parts)
                        if i in (0, len(parts) - 1) or not p.startswith("_"))

    def under_prefix(name):
        return any(name == p or name.startswith(p + ".") for p in prefixes)

    def initializing(module):
        spec = module_vars(module).get("__spec__")
        return getattr(spec, "_initializing", False) if spec is not None else False

    def module_name(module):
        if not isinstance(module, ModuleType):
            return None
        name = module_vars(module).get("__name__")
        return name if type(name) is str else None

    def replace_in(module, todo):
        """Put the stand-ins of ``todo`` in place of their originals in a module."""
        if not todo or not isinstance(module, ModuleType):
            return
        namespace = module_vars(module)
        for attr, value in list(namespace.items()):
            found = todo.get(id(value))
            if found is not None and found[0] is value:
                namespace[attr] = found[1]
                name = module_name(module)
                if name:
                    watched_modules.add(name)

    def replace_in_tables(todo):
        """The tables of a compiled original's package (scipy.special keeps its ufuncs in
        tuples of records and in dictionaries held by closures): one level into each value of
        its modules, two into records, closures and containers."""
        if not todo:
            return
        for name, module in list(sys.modules.items()):
            if type(name) is not str or not any(name == p or name.startswith(p + ".")
                                                 for p in packages):
                continue
            if not isinstance(module, ModuleType):
                continue
            for attr, value in list(module_vars(module).items()):
                if attr == "__builtins__":
                    continue
                if type(value) is FunctionType:
                    for cell in value.__closure__ or ():
                        if _filled(cell):
                            swap(cell.cell_contents, todo, 0)
                else:
                    swap(value, todo, 0)

    def swap(value, todo, level):
        """Put stand-ins in place of compiled originals inside ``value`` (a container or a
        record), ``level`` levels below a module's namespace."""
        kind = type(value)
        if kind is dict:
            for key, item in list(value.items()):
                found_key, found = todo.get(id(key)), todo.get(id(item))
                if found_key is not None and found_key[0] is key:
                    del value[key]
                    value[found_key[1]] = found[1] if found is not None and found[0] is item \
                        else item
                elif found is not None and found[0] is item:
                    value[key] = found[1]
                elif level < 2 and type(item) in (dict, list, tuple):
                    swap(item, todo, level + 1)
        elif kind is list:
            for i, item in enumerate(list(value)):
                found = todo.get(id(item))
                if found is not None and found[0] is item:
                    value[i] = found[1]
                elif level < 2 and type(item) in (dict, list, tuple):
                    swap(item, todo, level + 1)
        elif kind is tuple and level < 2:
            for item in value:
                if type(item) in (dict, list, tuple):
                    swap(item, todo, level + 1)
                elif type(item) not in (str, bytes, int, float, bool, type(None)) and \
                        not isinstance(item, (type, ModuleType)) and \
                        type(item) is not FunctionType:  # a record (scipy's _FuncInfo)
                    try:
                        attrs = object.__getattribute__(item, "__dict__")
                    except AttributeError:
                        continue
                    if type(attrs) is dict:
                        swap(attrs, todo, 2)

    def flush():
        """One pass over every loaded module for the compiled originals found since the last."""
        if replacing:
            todo = dict(replacing)
            replacing.clear()
            for module in list(sys.modules.values()):
                replace_in(module, todo)
            replace_in_tables(todo)

    def patch_module(module):
        """Every function and class a module under a forbidden prefix defines."""
        name = module_name(module)
        if name is None or name in patched_modules:
            return
        patched_modules.add(name)
        watched_modules.add(name)
        for attr, value in list(module_vars(module).items()):
            if attr.startswith("__") and attr.endswith("__"):
                continue
            if isinstance(value, type):
                origin = class_vars(value).get("__module__")
            elif type(value) is FunctionType:
                origin = value.__module__
            elif type(value).__name__ in _COMPILED_TYPES:
                origin = getattr(value, "__module__", None) or ""  # (a ufunc: no module)
            else:
                continue
            if not isinstance(origin, str) or not under_prefix(origin):
                continue  # (defined elsewhere: a helper the module imported)
            label = public(f"{origin}.{attr}")
            if isinstance(value, type):
                watch_class(value, label)
            else:
                watch_callable(value, label)
        replace_in(module, replacing)

    def may_hold_submodule(package, attr):
        """Whether a package's folders hold a file or folder that could be module ``attr``."""
        try:
            folders = [p for p in module_vars(package).get("__path__") if type(p) is str]
        except Exception:  # noqa: BLE001 (no usable __path__: assume it may)
            return True
        for folder in folders:
            if folder not in listings:
                try:
                    listings[folder] = frozenset(n.split(".")[0] for n in os.listdir(folder))
                except OSError:
                    listings[folder] = frozenset()
            if attr in listings[folder]:
                return True
        return False

    def find(module, rest):
        """What ``rest`` names below a loaded module: (its parent, it), ``missing`` while a
        submodule that may hold it is not imported yet, or None when it names nothing."""
        parent, target = None, module
        for attr in rest:
            parent = target
            if isinstance(parent, ModuleType):
                target = module_vars(parent).get(attr, missing)
                if target is missing:
                    if "__path__" in module_vars(parent) and may_hold_submodule(parent, attr):
                        return missing
                    return None
            elif isinstance(parent, type):
                target = next((class_vars(c)[attr] for c in class_mro(parent)
                               if attr in class_vars(c)), None)
            else:
                target = next((class_vars(c)[attr] for c in class_mro(type(parent))
                               if attr in class_vars(c)), None)
            if target is None:
                return None
        return parent, target

    def watch(entry, module, rest):
        """Watch ``entry``: ``module`` is its longest loaded module, ``rest`` the attributes
        below it. False while it names something in a module not imported yet."""
        if not rest:  # a module: what it holds, now and when imported
            if entry not in prefixes:
                prefixes.append(entry)
            for loaded in [m for n, m in list(sys.modules.items())
                           if type(n) is str and under_prefix(n)]:
                patch_module(loaded)
            return True
        found = find(module, rest)
        if found is missing:
            return False  # (resolved when that submodule is imported)
        if found is None:
            return True  # (names nothing: nothing to watch, as when it was imported)
        parent, target = found
        if type(target) in (staticmethod, classmethod):
            target = target.__func__
        if isinstance(target, ModuleType):
            if entry not in prefixes:
                prefixes.append(entry)
            patch_module(target)
        elif isinstance(parent, ModuleType):
            if isinstance(target, type):
                watch_class(target, entry)
            elif watch_callable(target, entry) is None and callable(target):
                # An object such as scipy.stats.norm: every method, on its class and on its
                # frozen class (frozen distributions make new objects of these classes).
                watch_methods(target, entry)
        elif isinstance(parent, type):  # a method named through its class
            if type(target) is FunctionType:
                own_method = any(v is target for v in class_vars(parent).values())
                watch_function(target, entry, None if own_method else parent)
        elif callable(parent):  # a method of a forbidden object (scipy.stats.beta.interval)
            watch_methods(parent, entry, only=rest[-1])
        return True

    def resolve(entry, ready=None):
        """Watch a name of `lazy` if its module is loaded (``ready``: a module that has just
        run, still marked as initializing by the import system)."""
        parts = lazy.get(entry)
        for cut in range(len(parts or ()), 0, -1):
            name = ".".join(parts[:cut])
            module = sys.modules.get(name)
            if module is not None:
                if name != ready and initializing(module):
                    return
                if watch(entry, module, parts[cut:]):
                    lazy.pop(entry, None)
                return

    def resolve_under(name, ready=None):
        """Resolve the names of `lazy` that module ``name`` may hold."""
        for entry in [e for e in lazy if e == name or e.startswith(name + ".")]:
            resolve(entry, ready)

    def patch_pending():
        for name in sorted(pending):
            module = sys.modules.get(name)
            if module is not None and not initializing(module):
                pending.discard(name)
                if under_prefix(name):
                    patch_module(module)
                resolve_under(name)
                keep_baseline(module)
        flush()

    def wrapped(name):
        return name in triggers or under_prefix(name)

    # ------------------------------------------------ whose code is running

    libraries = tuple(sorted({os.path.join(p, "") for p in (
        sys.prefix, sys.base_prefix, sys.exec_prefix, *[p for p in sys.path if p])}))
    own_codes = {v.__code__ for v in globals().values() if type(v) is FunctionType}
    helpers = set()

    def library(code):
        """Code of the Python installation (or made by it from text: a namedtuple, scipy's
        argument parsers), not the student's (a cell, or text the student ran)."""
        if id(code) in code_index or code in own_codes:
            return True
        name = code.co_filename
        if type(name) is not str or name.startswith("<ipython-input"):
            return False
        if name.startswith("<"):
            return id(code) not in student_codes
        return name.startswith(libraries)

    def mark_student(code):
        """``code`` (and what it holds) was run or made by the student's code."""
        todo, seen = [code], 0
        while todo and seen < 20000:
            c = todo.pop()
            seen += 1
            if id(c) not in student_codes:
                student_codes.add(id(c))
                student_kept.append(c)
            todo.extend(k for k in c.co_consts if type(k) is CodeType)

    def frames_from(frame, tid):
        """The frames from ``frame`` down the stack, with their code (read for the watch), one
        at a time: a walk that stops early reads no more."""
        for _ in range(500):
            if frame is None:
                return
            own.add(tid)
            try:
                code, below = frame.f_code, frame.f_back
            finally:
                own.discard(tid)
            yield frame, code
            frame = below

    def student_in_call(frame, tid):
        """Student code runs between ``frame`` and the forbidden call below it."""
        for _frame, code in frames_from(frame, tid):
            if id(code) in code_index:
                return False
            if not library(code):
                return True
        return False

    def student_anywhere(frame, tid):
        return any(not library(code) for _frame, code in frames_from(frame, tid))

    def student_direct(frame, tid):
        """Student code takes what ``frame`` does (through a helper that hands it frames)."""
        for _frame, code in frames_from(frame, tid):
            if code not in helpers:
                return not library(code)
        return False

    def running(tid=None):
        return any(e is not None for e in stacks.get(tid, ())) if tid is not None else \
            any(e is not None for s in list(stacks.values()) for e in s)

    # ------------------------------------------------ the hook

    def label_for(index, args):
        label = labels[index]
        if label is not None or not args:
            return label
        first = args[0]
        cls = first if isinstance(first, type) else type(first)
        table = receivers[index]
        for base in class_mro(cls):
            label = table.get(id(base))
            if label is not None:
                return label
        return None

    def keep_baseline(module):
        """A copy of a library module's namespace as it was loaded (a library function's call
        is its own only while what it names is unchanged)."""
        name = module_vars(module).get("__file__")
        if type(name) is str and name.startswith(libraries):
            baselines.setdefault(id(module_vars(module)), module_vars(module).copy())

    def unchanged(namespace, names):
        base = baselines.get(id(namespace))
        if base is None:
            return False
        for name in names:
            now, then = namespace.get(name, missing), base.get(name, missing)
            if now is not then and stand_ins.get(id(then)) is not now:
                return False
        return True

    def library_function(fn):
        found = library_functions.get(id(fn))
        if found is None:
            found = library_functions[id(fn)] = library(fn.__code__)
            kept.append(fn)
        return found

    def trusted(value, depth=0):
        """Not a callable of the student's (on a library object, it would steer its methods)."""
        kind = type(value)
        if kind is FunctionType:
            return library_function(value)
        if kind is types.MethodType:
            return trusted(value.__func__, depth + 1)
        if kind.__name__ == "partial" and depth < 5:
            return trusted(object.__getattribute__(value, "func"), depth + 1)
        return not callable(value) or depth < 5 and library_class(kind)

    def library_class(cls):
        """A class (and its bases) whose every function is library code."""
        return all(library_function(fn) for base in class_mro(cls)
                   for fn in functions_of(base).values())

    def exempt(index, label, frame, tid):
        """A call that an allowed library function makes itself: its code names the forbidden
        call (not a function handed to it, as map or numpy.apply_along_axis are), its module
        and the modules it names are as they were loaded, and it is not a method of a student's
        class; or a library module (or class body) calls it while it is imported."""
        if frame is None:
            return False
        own.add(tid)
        try:
            code = frame.f_code
            if not library(code) or id(code) in code_index:
                return False
            if not code.co_flags & 1:  # (not CO_OPTIMIZED: a module or class body, importing)
                return True
            names = code.co_names
            namespace = frame.f_globals
            builtins_ = frame.f_builtins
            receiver = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount and \
                code.co_varnames[0] in ("self", "cls") else missing
        finally:
            own.discard(tid)
        mine = faces[index]
        named = False
        for name in names:
            value = namespace.get(name, missing)
            if id(value) in mine:
                named = True
            elif isinstance(value, ModuleType):
                inner = module_vars(value)
                if any(id(inner.get(n)) in mine for n in names):
                    named = True
                if not unchanged(inner, names):
                    return False
        if receiver is not missing:
            cls = receiver if isinstance(receiver, type) else type(receiver)
            if not library_class(cls):
                return False
            if not isinstance(receiver, type):
                try:
                    attrs = object.__getattribute__(receiver, "__dict__")
                except AttributeError:
                    attrs = {}
                if type(attrs) is dict and not all(trusted(v) for v in attrs.values()):
                    return False
            for name in names:
                for base in class_mro(cls):
                    found = class_vars(base).get(name, missing)
                    if found is not missing:
                        if type(found) in (staticmethod, classmethod):
                            found = found.__func__
                        named = named or id(found) in mine
                        break
        return named and unchanged(namespace, names) and \
            (type(builtins_) is not dict or unchanged(builtins_, names))

    def hands_itself_out(index, args, kwargs):
        """A compiled original (a ufunc) would be handed to student code by numpy's
        ``__array_ufunc__`` protocol."""
        values = list(args) + list(kwargs.values())
        for value in list(values):
            if type(value) is tuple:
                values.extend(value)
        for value in values:
            for base in class_mro(type(value)):
                method = class_vars(base).get("__array_ufunc__")
                if method is not None:
                    if type(method) is FunctionType and not library(method.__code__):
                        return True
                    break
        return False

    def enter(tid, origin, index, args, kwargs, box):
        own.add(tid)
        try:
            genuine = origin.f_code is codes[index]
            caller = origin.f_back if genuine else None
        finally:
            own.discard(tid)
        if not genuine:
            return
        stack = stacks.setdefault(tid, [])
        label = label_for(index, args)
        if kinds[index] == "signal":  # signal.signal: a Python handler is handed frames
            if len(args) > 1 and callable(args[1]):
                monitor("installs a signal handler")
            stack.append(None)
        elif label is None:
            stack.append(None)
        elif running(tid) and not child[0] and not student_in_call(caller, tid):
            stack.append([label, False])  # (what a forbidden call calls inside is its own)
        elif exempt(index, label, caller, tid):
            stack.append([label, False])
        else:
            stack.append([label, True])
            emit("forbidden", "name", label)
            if kinds[index] == "compiled" and hands_itself_out(index, args, kwargs):
                monitor("hands a forbidden function to its own __array_ufunc__")
            tracer = gettrace() or getprofile()
            if tracer is not None and type(tracer).__name__ != "Profiler":
                monitor("traces a forbidden call")
        box.append(originals[index])

    def leave(tid, origin, index):
        own.add(tid)
        try:
            genuine = origin.f_code is codes[index]
        finally:
            own.discard(tid)
        stack = stacks.get(tid)
        if genuine and stack:
            stack.pop()

    def same(code, original, depth=0):
        """The same code but for names of its own (function, variables, file, lines)."""
        if code is original:
            return True
        if depth > 20 or shape(code) != shape(original) or code.co_names != original.co_names \
                or len(code.co_consts) != len(original.co_consts) \
                or code.co_code != original.co_code:
            return False
        for a, b in zip(code.co_consts, original.co_consts, strict=True):  # (plain values)
            if type(a) is not type(b):
                return False
            if type(a) is CodeType:
                if not same(a, b, depth + 1):
                    return False
            elif a != b:
                return False
        return True

    def copies_of(code):
        """The labels of the forbidden functions whose code ``code`` (or a code it holds) is."""
        todo, seen, found = [code], 0, []
        while todo and seen < 20000:
            c = todo.pop()
            seen += 1
            label = next((label for original, label in prints.get(shape(c), ())
                          if same(c, original)), None)
            if label is not None:
                found.append(label)
            else:
                todo.extend(k for k in c.co_consts if type(k) is CodeType)
        return sorted(set(found))

    def refuse_copy(code, first_run_allowed):
        """Refuse to run a copy of a forbidden function's code (reported as that call)."""
        if not prints:
            return
        name = code.co_filename
        if first_run_allowed and code.co_name == "<module>" and type(name) is str \
                and name.startswith(libraries):
            if not loaded_files:
                loaded_files.update(f for f in (getattr(m, "__file__", None) for m in list(
                    sys.modules.values()) if isinstance(m, ModuleType)) if type(f) is str)
            if name not in loaded_files:
                loaded_files.add(name)  # (a library module's first run)
                return
        found = copies_of(code)
        for label in found:
            emit("forbidden", "name", label)
        if found:
            raise _Refused(f"this code is a copy of {', '.join(found)}, forbidden while the "
                           "notebook is graded")

    def compiled_under_library_name(source, filename):
        """Code compiled under the name of a library file whose text it is not."""
        if isinstance(filename, bytes):
            filename = os.fsdecode(filename)
        if type(filename) is not str or not filename.startswith(libraries):
            return False
        if isinstance(source, str):
            source = source.encode()
        if not isinstance(source, (bytes, bytearray, memoryview)):
            return True  # (a syntax tree: no file holds that)
        try:
            with open(filename, "rb") as fh:
                return fh.read() != bytes(source)
        except OSError:
            return True

    def handle(tid, event, args, origin):  # noqa: C901 (one event each)
        if event == "mlcourse.forbidden":
            if len(args) == 4 and type(args[0]) is int and 0 <= args[0] < len(codes) and \
                    type(args[1]) is tuple and type(args[2]) is dict and type(args[3]) is list \
                    and not args[3]:
                enter(tid, origin, args[0], args[1], args[2], args[3])
        elif event == "mlcourse.return":
            if len(args) == 1 and type(args[0]) is int and 0 <= args[0] < len(codes):
                leave(tid, origin, args[0])
        elif event == "mlcourse.raised":
            if len(args) == 2 and type(args[0]) is int and 0 <= args[0] < len(codes) and \
                    any(c is BaseException for c in class_mro(type(args[1]))):
                own.add(tid)
                try:
                    genuine = origin.f_code is codes[args[0]]
                finally:
                    own.discard(tid)
                if genuine:  # no traceback leads into the original's frames
                    set_traceback(args[1], None)
                    set_context(args[1], None)
                    set_cause(args[1], None)
        elif event == "mlcourse.request":
            if not child[0]:
                reported.clear()
                page[:8] = (int.from_bytes(page[:8], "little") + 1).to_bytes(8, "little")
            patch_pending()
        elif event == "mlcourse.done":
            for stack in list(stacks.values()):  # forbidden calls still running count
                first = next((e for e in list(stack) if e is not None and e[1]), None)
                if first is not None:
                    emit("forbidden", "name", first[0])
        elif event == "mlcourse.find":
            if len(args) == 2 and type(args[0]) is str and type(args[1]) is list and \
                    origin is not None and is_hook_code(tid, origin, "find_spec") and \
                    wrapped(args[0]):
                args[1].append(True)
        elif event in ("mlcourse.loading", "mlcourse.loaded"):
            if origin is None or not is_hook_code(tid, origin, "exec_module"):
                return
            if event == "mlcourse.loading":
                loading[tid] = loading.get(tid, 0) + 1
                return
            loading[tid] = max(loading.get(tid, 1) - 1, 0)
            name = module_name(args[0]) if args else None
            if name is not None:
                pending.discard(name)
                if under_prefix(name):
                    patch_module(args[0])
                resolve_under(name, ready=name)
                replace_in(args[0], replacing)
                keep_baseline(args[0])
            if not loading[tid]:
                flush()
        elif event in _GC_EVENTS:
            monitor(f"uses {event}")
        elif event in _FRAME_EVENTS or event == "object.__getattr__":
            if event == "object.__getattr__" and (len(args) < 2 or args[1] not in
                                                  _FRAME_ATTRIBUTES):
                return
            if event in ("sys._current_frames", "sys._current_exceptions"):
                if running() and student_anywhere(origin, tid):
                    monitor("inspects other threads' frames while a forbidden call runs")
            elif running(tid) and student_in_call(origin, tid):
                monitor("inspects frames during a forbidden call")
            if student_direct(origin, tid):
                monitor(f"uses frames ({args[1] if event == 'object.__getattr__' else event})")
        elif event == "object.__setattr__":
            if len(args) > 1 and args[1] == "__code__":
                library_functions.pop(id(args[0]), None)
        elif event == "exec":
            if pending:
                patch_pending()
            if args and type(args[0]) is CodeType:
                refuse_copy(args[0], True)
                if origin is not None and not is_library_frame(tid, origin):
                    mark_student(args[0])
        elif event == "function.__new__":
            if args and type(args[0]) is CodeType:
                refuse_copy(args[0], False)
                if origin is not None and not is_library_frame(tid, origin):
                    mark_student(args[0])
        elif event == "code.__new__":
            if len(args) >= 2 and args[0] in raw_prints:
                raise _Refused("this code is a copy of a function that is forbidden while the "
                               "notebook is graded")
            if len(args) >= 2 and type(args[1]) is str and args[1].startswith(libraries) \
                    and origin is not None and not is_library_frame(tid, origin):
                monitor("makes code under the name of a library file")
        elif event == "compile":
            if len(args) >= 2 and compiled_under_library_name(args[0], args[1]):
                monitor("compiles code under the name of a library file")
        elif event == "marshal.loads":
            if loads_by_itself(tid, origin):
                monitor("loads compiled code itself (marshal)")
        elif event == "import":
            name = args[0] if args and type(args[0]) is str else ""
            if name in watched_modules:
                monitor(f"re-imports {name}")
            if prefixes and len(args) > 3 and type(args[3]) is list:
                if not any(f is finder for f in args[3]):
                    monitor("removes the import hook")
                elif name.partition(".")[0] in roots and args[3][0] is not finder:
                    monitor("puts an import hook before the watch")
                if not hook_intact():
                    monitor("changes the watch's import hook")
            if wrapped(name):
                pending.add(name)
        elif event in _PROGRAM_EVENTS:
            if not programs_blocked:
                monitor("starts another program (a new Python would run unwatched)")
        elif event in ("sys.settrace", "sys.setprofile"):
            if sets_tracer(tid, origin):
                monitor(f"installs a tracer ({event})")
        elif event == "ctypes.dlsym":
            name = args[1] if len(args) > 1 and type(args[1]) is str else ""
            if name.startswith(("Py", "_Py")):
                monitor("reaches Python's C API through ctypes")
            elif name in _MEMORY_SYMBOLS:
                monitor("reads memory through ctypes")
        elif event in _CTYPES_MEMORY:
            if student_direct(origin, tid):
                monitor("reads memory through ctypes")
        elif event == "open":
            path = args[0] if args else None
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if type(path) is str and path.endswith("/mem") and path.startswith("/proc/"):
                monitor("reads its own memory (/proc)")

    def is_library_frame(tid, frame):
        own.add(tid)
        try:
            return library(frame.f_code)
        finally:
            own.discard(tid)

    def is_hook_code(tid, frame, method):
        own.add(tid)
        try:
            return frame.f_code is hook_codes[method]
        finally:
            own.discard(tid)

    def hook_intact():
        return class_vars(Finder).get("find_spec") is hook_functions["find_spec"] and \
            class_vars(Loader).get("exec_module") is hook_functions["exec_module"] and \
            all(hook_functions[m].__code__ is hook_codes[m] for m in hook_codes)

    def loads_by_itself(tid, frame):
        """marshal.loads not called by an import (nor a reload) for the code of a module."""
        for _frame, code in frames_from(frame, tid):
            if code in own_codes:
                continue
            if code.co_filename.startswith("<frozen importlib"):
                if code.co_name in ("_find_and_load", "_find_and_load_unlocked", "_exec",
                                    "_load"):
                    return False
                continue
            return not library(code)
        return False

    def sets_tracer(tid, frame):
        for _frame, code in frames_from(frame, tid):
            if code.co_filename.endswith(os.sep + "threading.py"):
                threading_ = module_vars(sys.modules["threading"]) if "threading" in \
                    sys.modules else {}
                return threading_.get("_trace_hook") is not None or \
                    threading_.get("_profile_hook") is not None
            if not library(code):
                return True
            if code.co_filename.endswith((os.sep + "cProfile.py", os.sep + "profile.py")):
                return False
        return False

    interesting = frozenset({
        "mlcourse.forbidden", "mlcourse.return", "mlcourse.raised", "mlcourse.request",
        "mlcourse.done", "mlcourse.find", "mlcourse.loading", "mlcourse.loaded", "exec",
        "function.__new__", "code.__new__", "compile", "marshal.loads", "import",
        "object.__getattr__", "object.__setattr__", "sys.settrace", "sys.setprofile",
        "sys.addaudithook",
        "ctypes.dlsym", "open", *_GC_EVENTS, *_FRAME_EVENTS, *_PROGRAM_EVENTS, *_CTYPES_MEMORY})

    def hook(event, args):
        if event not in interesting or event == "object.__getattr__" and (
                len(args) < 2 or args[1] not in _FRAME_ATTRIBUTES) or \
                event == "object.__setattr__" and (len(args) < 2 or args[1] != "__code__"):
            return
        if event == "sys.addaudithook":  # a later hook would see what this one hands out
            monitor("adds an audit hook")
            raise RuntimeError("no audit hook may be added while the notebook is graded")
        tid = get_ident()
        if tid in inside:
            if tid not in own and (event in _FRAME_EVENTS or event == "object.__getattr__"):
                monitor("runs code inside the watch that inspects frames")
            return
        inside.add(tid)
        try:
            own.add(tid)
            try:
                origin = getframe(1)
            except ValueError:
                origin = None
            finally:
                own.discard(tid)
            handle(tid, event, args, origin)
        except _Refused:
            raise
        except Exception:  # noqa: BLE001, S110 (never break the operation being audited)
            pass
        finally:
            inside.discard(tid)

    def after_fork_in_child():
        child[0] = True
        me = get_ident()
        for tid in [t for t in stacks if t != me]:
            stacks.pop(tid, None)
        inside.clear()
        own.clear()

    # ------------------------------------------------ the import hook

    namespace = {"__builtins__": __builtins__, "__name__": "mlcourse_watch"}
    exec(compile(_IMPORT_HOOK, "<mlcourse watch>", "exec"), namespace)
    Loader, Finder = namespace["Loader"], namespace["Finder"]
    finders = tuple(sys.meta_path)  # (the interpreter's, before any student code ran)
    constants.update({"__L__": Loader, "__finders__": finders})
    hook_functions, hook_codes = {}, {}
    for cls, method in ((Loader, "exec_module"), (Finder, "find_spec"),
                        (Loader, "__getattr__")):
        fn = class_vars(cls)[method]
        fn.__code__ = fn.__code__.replace(co_consts=tuple(
            constants.get(c, c) if type(c) is str else c for c in fn.__code__.co_consts))
        hook_functions[method], hook_codes[method] = fn, fn.__code__
    own_codes.update(hook_codes.values())
    finder = Finder()
    for module_, name_ in _FRAME_HELPERS:
        fn = module_vars(sys.modules[module_]).get(name_) if module_ in sys.modules else None
        if type(fn) is FunctionType:
            helpers.add(fn.__code__)

    def resolve_all():
        for entry in entries:
            lazy[entry] = parts = entry.split(".")
            if parts[0] not in sys.modules:
                continue  # (a whole package is never imported here)
            resolve(entry)
        for entry, parts in lazy.items():  # the rest waits for its module
            if entry not in prefixes:
                prefixes.append(entry)
            triggers.update(".".join(parts[:cut]) for cut in range(1, len(parts)))
        roots.update(p.partition(".")[0] for p in prefixes)
        import _signal  # a Python signal handler is handed the frame that runs (the hook's)

        watch_compiled(module_vars(_signal)["signal"], "signal.signal", "signal")
        watched_modules.add("_signal")
        count = sum(1 for k in kinds if k != "signal")
        flush()
        for module in list(sys.modules.values()):
            if isinstance(module, ModuleType):
                keep_baseline(module)
        builtins_ = module_vars(sys.modules["builtins"])
        baselines[id(builtins_)] = builtins_.copy()
        return count, sorted(prefixes)

    loaded_files.update(f for f in (module_vars(m).get("__file__") for m in list(
        sys.modules.values()) if isinstance(m, ModuleType)) if type(f) is str)
    # The hook is added once the watched functions are in place (their setting up raises
    # events of its own, thousands where a whole package is forbidden); nothing runs in
    # between that could call one. Later, the hook does that work itself.
    sys.meta_path.insert(0, finder)
    found = resolve_all()
    sys.addaudithook(hook)
    os.register_at_fork(after_in_child=after_fork_in_child)
    return found


def _handle(op, msg, request):
    """Run one cell or call one function; returns the reply (``_serve`` sends it)."""
    if op == "exec":
        with _Warnings() as caught:
            result = shell.run_cell(msg["source"], store_history=False)
        error = result.error_before_exec or result.error_in_exec
        reply = {"ok": error is None, "warnings": caught}
        if error is not None:
            reply.update(_exception_info(error))
        sys.stdout.flush()
        sys.stderr.flush()
        reply["id"] = request
        return reply
    if op == "call":
        fn = shell.user_ns.get(msg["name"])
        if not callable(fn):
            return {"ok": False, "exc_type": "NameError", "exc_mro": ["NameError", "Exception"],
                    "message": f"the notebook does not define a function {msg['name']!r}",
                    "warnings": [], "id": request}
        with _Warnings() as caught:
            try:
                value = fn(*decode(msg["args"]), **decode(msg["kwargs"]))
                reply = {"ok": True, "value": encode(value)}
            except BaseException as exc:  # noqa: BLE001 (the student's error is data)
                reply = {"ok": False, **_exception_info(exc)}
        reply["warnings"] = caught
        reply["id"] = request
        sys.stdout.flush()
        sys.stderr.flush()
        return reply
    return None


def _serve(write_fd):
    # Locals of a running frame: student code cannot unbind them. The watch hears of each
    # request before it runs, and of each call's end before its reply leaves (a forbidden call
    # still running in another thread then counts for the test that made the call).
    audit, handle, reply_with = sys.audit, _handle, send
    monitored = False
    while True:
        try:
            msg = receive()
        except EOFError:
            break
        audit("mlcourse.request")
        op = msg.get("op")
        request = msg.get("id")
        if op == "monitor" and not monitored:
            monitored = True
            try:
                count, prefixes = _install_monitor([str(n) for n in msg.get("names", [])],
                                                   write_fd, programs_blocked=SECCOMP)
                reply_with({"ok": True, "value": [count, prefixes], "warnings": [],
                            "id": request})
            except Exception as exc:  # noqa: BLE001
                reply_with({"ok": False, **_exception_info(exc), "warnings": [],
                            "id": request})
        elif op == "exit":
            break
        else:
            reply = handle(op, msg, request)
            if op == "call":
                audit("mlcourse.done")
            if reply is not None:
                reply_with(reply)


# ---------------------------------------------------------------- the prepared image (zygote)
# Starting Python and importing numpy, IPython and what the solution imports costs each
# sandbox about half a second of CPU. The grader instead starts this program once, as root of
# fresh namespaces with the minimal root already built (``isolation.py``'s set-up script with
# mode ``zygote``); it imports all that, then forks one child per sandbox. Each child leaves
# for namespaces of its own (mount, PID, IPC, UTS, network), with its own /tmp and /dev/shm,
# joins its cgroup, and as PID 1 of its PID namespace starts the runner, which drops to nobody
# with no capabilities, no_new_privs and the filter before it serves the grader. The image
# never runs student code: it only ever reads the grader's requests.

_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
_CLONE_NEWPID, _CLONE_NEWNET = 0x20000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_MOVE, _MS_REC, _MS_PRIVATE = 32, 4096, 8192, 16384, 1 << 18
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT = 38, 24, 47
_PR_CAP_AMBIENT_CLEAR_ALL, _PR_SET_DUMPABLE, _MNT_DETACH = 4, 4, 2
#: Where a child builds its fresh /tmp before moving it over the image's.
_SCRATCH = "/.scratch"


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_char_p]
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                           ctypes.c_ulong]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return libc


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(libc, source, target, fstype, flags, data=None):
    enc = (lambda x: None if x is None else os.fsencode(x))
    _check(libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)),
           f"mount {target}")


def _mounts_under(top):
    """The mount points strictly below ``top`` in this mount namespace, outermost only (a
    mount moves with what is mounted below it)."""
    with open("/proc/self/mountinfo") as fh:
        points = {line.split()[4].replace("\\040", " ") for line in fh}
    below = sorted(p for p in points if p.startswith(top + "/"))
    return [p for p in below if not any(p.startswith(q + "/") for q in below if q != p)]


def _own_namespaces(libc, spec):
    """In the child: join the cgroup, leave for new namespaces, and replace the image's /tmp
    and /dev/shm by fresh ones; what the image has mounted below its /tmp (the environment and
    the reference's decoy, where the repository lies under /tmp as CI clones it) is moved into
    the fresh /tmp as it is, read-only; the image's own are detached, not merely covered."""
    for fd in spec["cgroup_fds"]:
        os.write(fd, b"0")  # "0": the writing process (cgroup v1 and v2)
        os.close(fd)
    os.chdir("/")
    _check(libc.unshare(_CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWUTS
                        | _CLONE_NEWNET), "unshare")
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount(libc, "mlcourse-tmp", _SCRATCH, "tmpfs", _MS_NOSUID | _MS_NODEV,
           "size=512m,mode=1777")
    os.mkdir(_SCRATCH + "/work", 0o700)
    if spec["uid"] is not None:
        os.chown(_SCRATCH + "/work", spec["uid"], spec["uid"])
    for path in _mounts_under("/tmp"):
        target = _SCRATCH + path[len("/tmp"):]
        os.makedirs(target, exist_ok=True)
        _mount(libc, path, target, None, _MS_MOVE)
    _check(libc.umount2(b"/tmp", _MNT_DETACH), "detach the image's /tmp")
    _mount(libc, _SCRATCH, "/tmp", None, _MS_MOVE)
    _check(libc.umount2(b"/dev/shm", _MNT_DETACH), "detach the image's /dev/shm")
    _mount(libc, "shm", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "size=64m,mode=1777")


def _drop_privileges(libc, uid):
    """Become ``uid`` (None: stay the namespace's root) with no capability in any set, no
    supplementary group and no_new_privs; exit unless /proc/self/status says so."""
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        last = int(fh.read())
    for cap in range(last + 1):
        _check(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "drop the bounding set")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    _check(libc.capset(ctypes.byref(Header(0x20080522, 0)), ctypes.byref((Data * 2)())),
           "clear the capabilities")
    _check(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient")
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # Dumpable, as after an exec (a uid change clears it): the process reads its own /proc
    # files as one started from scratch does; ptrace stays refused by the filter.
    _check(libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
    want = str(0 if uid is None else uid)
    ids_ok = all(status[k].split() == [want] * 4 for k in ("Uid", "Gid"))
    caps_ok = all(int(status[k], 16) == 0 for k in ("CapInh", "CapPrm", "CapEff", "CapBnd",
                                                     "CapAmb"))
    if not (ids_ok and caps_ok and not status["Groups"].split()
            and status["NoNewPrivs"].strip() == "1"):
        os._exit(112)


def _init(libc, spec, read_fd, write_fd, death_fd):
    """PID 1 of the child's PID namespace: mount its own /proc (the image's detached), start
    the runner, reap whatever is orphaned, and when the runner ends write how to the death
    pipe (``E<status>`` or ``S<signal>``; the grader holds the read end) and exit; everything
    left in the namespace dies with it."""
    _check(libc.umount2(b"/proc", _MNT_DETACH), "detach the image's /proc")
    _mount(libc, "proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    runner = os.fork()
    if runner == 0:
        try:
            _become_runner(libc, spec, read_fd, write_fd)
        finally:
            os._exit(113)
    for fd in (read_fd, write_fd, 1, 2):
        os.close(fd)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(113)
        except InterruptedError:
            continue
        if pid == runner:
            how = (f"S{os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"E{os.WEXITSTATUS(status)}")
            try:
                os.write(death_fd, how.encode())
            finally:
                os._exit(0)


def _become_runner(libc, spec, read_fd, write_fd):
    """The sandbox's runner, forked from the prepared image: only its pipes open, its limits
    set, its privileges dropped, then :func:`main` (the filter first, as always)."""
    import resource

    keep = sorted({0, 1, 2, read_fd, write_fd})
    for low, high in zip(keep, [*keep[1:], 1 << 20], strict=True):
        os.closerange(low + 1, high)
    os.chdir("/tmp/work")
    for name, value in spec["rlimits"]:
        resource.setrlimit(getattr(resource, name), (value, value))
    _drop_privileges(libc, spec["uid"])
    _fresh_random_state()
    sys.argv = ["-c", str(read_fd), str(write_fd), spec["mode"]]
    main(sys.argv[1:])


def _fresh_random_state():
    """Reseed, from the OS's entropy, the random state a fork copies from the image: numpy's
    legacy global generator (``np.random.rand``, ``np.random.seed``; numpy never reseeds it
    after a fork, and the image has it once it imports ``numpy.random``, as ``scipy.stats``
    does: every sandbox would draw the same numbers) and Python's ``random`` (CPython reseeds
    it after ``os.fork`` already; reseeded here too, not left to that)."""
    import random

    random.seed()
    mtrand = sys.modules.get("numpy.random.mtrand")  # (not imported yet: seeded at import)
    if mtrand is not None:
        mtrand.seed()


def _spawn_child(libc, spec, fds, report_fd):
    """The forked child (never returns): its namespaces, then PID 1 of the new PID namespace;
    it writes that process's PID to ``report_fd`` and exits. ``fds``: the request pipe's read
    end, the reply pipe's write end, the output pipe's write end, the death pipe's write end
    (held by PID 1 until it exits), then the cgroup files to join."""
    try:
        read_fd, write_fd, out_fd, death_fd = fds[:4]
        os.dup2(out_fd, 1)  # (what goes wrong from here on is in the sandbox's output)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        _own_namespaces(libc, spec)
        pid = os.fork()
        if pid == 0:
            os.close(report_fd)
            try:
                _init(libc, spec, read_fd, write_fd, death_fd)
            finally:
                os._exit(113)
        os.write(report_fd, str(pid).encode())
        os._exit(0)
    except BaseException as exc:  # noqa: BLE001
        try:
            os.write(2, f"the sandbox could not be set up: {exc}\n".encode())
        finally:
            os._exit(111)


def zygote(control_fd: int) -> None:
    """The prepared image: import the modules named in the grader's first message on
    ``control_fd`` (a SEQPACKET socket; the solution's imports), then serve the grader's
    requests there until it closes, one at a time and never waiting on a sandbox.
    ``{"op": "spawn", "spec": ...}`` with the sandbox's pipes and
    cgroup files as descriptors forks a sandbox and answers its PID here; ``{"op": "kill",
    "pid": ...}`` sends SIGKILL to a sandbox it forked and has not reaped (its whole PID
    namespace ends) and forgets it once reaped. How a sandbox ended reaches the grader through
    its death pipe, not through here; the image reaps ended sandboxes before each request."""
    import select
    import signal
    import socket
    import threading

    prepare()
    sock = socket.socket(fileno=control_fd)
    _preload(sock)
    libc = _libc()
    # sandbox PID -> "running", "killed" (not reaped yet) or "reaped" (not asked to end yet);
    # forgotten when both killed and reaped (after that, its PID may be another process's)
    alive = {}
    sock.send(json.dumps({"ready": True}).encode())

    def reap_all():
        while alive:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            if alive.get(pid) == "killed":
                del alive[pid]
            elif pid in alive:
                alive[pid] = "reaped"

    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 16)
        except InterruptedError:
            continue
        if not message:
            os._exit(0)  # the grader is gone: so is every sandbox (this is PID 1)
        reply = {}
        try:
            reap_all()
            request = json.loads(message)
            op = request.get("op")
            if op == "spawn":
                if threading.active_count() != 1 or len(os.listdir("/proc/self/task")) != 1:
                    raise RuntimeError("the prepared image has started a thread")
                report_r, report_w = os.pipe()
                spec = dict(request["spec"], cgroup_fds=fds[4:])
                child = os.fork()
                if child == 0:
                    alive.clear()  # (nothing of the other sandboxes stays in this one)
                    message = request = None
                    os.close(report_r)
                    sock.close()
                    _spawn_child(libc, spec, fds, report_w)
                os.close(report_w)
                got = b""
                while select.select([report_r], [], [], 10)[0]:
                    chunk = os.read(report_r, 64)
                    if not chunk:
                        break
                    got += chunk
                os.close(report_r)
                os.kill(child, signal.SIGKILL)  # (exited already, unless it hung)
                _, status = os.waitpid(child, 0)
                if got.isdigit() and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
                    alive[int(got)] = "running"
                    reply = {"pid": int(got)}
                else:
                    if got.isdigit():  # (a child cut short after its fork: none of it runs)
                        os.kill(int(got), signal.SIGKILL)
                        alive[int(got)] = "killed"
                    reply = {"failed": os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1}
            elif op == "kill":
                pid = int(request["pid"])
                if alive.get(pid) == "running":  # (never a PID another process may have now)
                    os.kill(pid, signal.SIGKILL)  # PID 1 of its namespace: all of it dies
                    alive[pid] = "killed"
                elif alive.get(pid) == "reaped":
                    del alive[pid]
        except Exception as exc:  # noqa: BLE001
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
        sock.send(json.dumps(reply).encode())


def _preload(sock):
    """Import the modules that the grader's first message on ``sock`` names (the image's;
    kept nowhere: a sandbox forked later can read its memory)."""
    import importlib

    for name in json.loads(sock.recv(1 << 16)).get("preload", []):
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001, S110 (its failure is the sandbox's to meet)
            pass


def prepare() -> None:
    """Import numpy and IPython and make the shell (no student code has run yet): what each
    sandbox needs before its first cell. A prepared image (:func:`zygote`) does it once."""
    global np, shell
    if shell is not None:
        return
    import numpy as np
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    # Cells run with store_history=False: no history database (on disk, and a thread to write
    # it), which costs a tenth of a second per sandbox.
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.colors = "NoColor"


def main(argv: list[str] | None = None) -> None:
    """Serve the grader: ``argv`` (default ``sys.argv[1:]``) is ``READ_FD WRITE_FD MODE``, the
    mode ``namespace`` or ``fallback``, with ``-probe`` to only report the defences and exit;
    or ``CONTROL_FD zygote`` for the prepared image (:func:`zygote`)."""
    global SECCOMP, _in, _out
    args = sys.argv[1:] if argv is None else list(argv)
    if args[1:2] == ["zygote"]:  # (no filter: its children make namespaces and mounts)
        zygote(int(args[0]))
    SECCOMP = _install_seccomp([int(a) for a in args[:2] if a.isdigit()])  # before anything
    read_fd, write_fd, mode = int(args[0]), int(args[1]), args[2]
    probe = mode.endswith("-probe")  # only say which defences hold, then exit
    mode = mode.removesuffix("-probe")
    _in = os.fdopen(read_fd, "rb", buffering=0)
    _out = os.fdopen(write_fd, "wb", buffering=0)
    if probe:
        send({"event": "ready", "pid": os.getpid(), "seccomp": SECCOMP, "uid": os.getuid()})
        os._exit(0)
    if mode == "fallback":
        sys.meta_path.insert(0, _Blocker())

    prepare()
    send({"event": "ready", "pid": os.getpid(), "seccomp": SECCOMP, "uid": os.getuid()})
    _serve(write_fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # (the protocol's descriptors stay open: seccomp refuses to close them)


if __name__ == "__main__":
    main()
