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
# neighbour, no kernel keyrings, modules, BPF or io_uring. The process has no capabilities and
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
        135, 179, 164, 227, 159, 305, 103, 170, 171, 172, 173, 134, 153,
        253, 254, 294, 300, 301]),  # inotify_init, _add_watch, _init1, fanotify_init, _mark
    "aarch64": (0xC00000B7, 220, 435, [
        97, 268, 40, 39, 41, 51, 117, 270, 271, 219, 217, 218, 280, 241, 104, 294, 105, 273, 106,
        265, 264, 282, 224, 225, 142, 89, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442, 92,
        60, 170, 112, 116, 161, 162, 171, 266, 58,
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
    (A determined student can remove this hook; see the README's "Limits" section.)"""

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
# forbids. Each is replaced, in every loaded module that holds it, by a stand-in that raises the
# audit event "mlcourse.forbidden"; an audit hook (which Python never lets anyone remove or list)
# reports the call at once on the reply pipe and then calls the original, which only the hook
# holds. What is reported cannot be taken back: the grader records it as it arrives.
#
# The watch imports nothing (scipy.stats alone takes a second, in every sandbox): a call whose
# module is not loaded yet is resolved when that module is first imported. An import hook, first
# in ``sys.meta_path``, wraps the loader of every module a watched name may live in; when such a
# module has run, and before the import returns to the code that asked for it, the names it
# holds are replaced. Modules under a forbidden prefix are wrapped whole in the same way.
#
# The hook also reports what could disable the watch: the garbage collector's object lists (the
# only way to the hook's state outside a forbidden call), frames reached while a forbidden call
# runs (the hook's frame is then on the stack), a re-import of a watched module, and the removal
# of the import hook or another finder put before it. The seccomp filter keeps the reply pipe's
# descriptor from being closed or replaced.

_GC_EVENTS = ("gc.get_referrers", "gc.get_referents", "gc.get_objects")
_FRAME_EVENTS = ("sys._getframe", "sys._current_frames")
_FRAME_ATTRIBUTES = ("tb_frame", "gi_frame", "cr_frame", "ag_frame")
#: Callable objects that are functions (replaced by a stand-in, not patched method by method).
_FUNCTION_TYPES = ("ufunc", "_ArrayFunctionDispatcher")


def _install_monitor(entries, fd):  # noqa: C901 (one closure holds all its state)
    """Watch the calls ``entries`` (qualified names or module prefixes), reporting on the
    descriptor ``fd``; returns ``(number of functions replaced now, names watched on import)``.
    """
    import inspect
    import types

    write, pack, audit = os.write, struct.pack, sys.audit
    originals, labels = [], []
    reported = set()
    depth = [0]
    by_id = {}             # id(original) -> stand-in (the original is kept alive in `originals`)
    replacing = {}         # id(original) -> (original, stand-in): not yet replaced everywhere
    stand_ins = {}         # id -> every stand-in made (kept alive here: ids stay unique)
    patched_classes = set()
    watched_modules = set()  # modules that hold a stand-in (a re-import would undo it)
    patched_modules = set()
    prefixes = []          # module prefixes, and every name not resolved yet
    lazy = {}              # entry -> its parts: not resolved yet (its module is not loaded)
    triggers = set()       # the modules whose import may resolve an entry of `lazy`
    roots = set()          # top-level packages of `prefixes` (imports the hook must see first)
    pending = set()        # imported without the import hook: patched at the next event
    loading = [0]          # wrapped imports running (replacing everywhere waits for the last)
    listings = {}          # folder -> its file names (may a package hold a submodule?)
    missing = object()

    def clean(text):
        return "".join(c for c in str(text)[:200] if c.isalnum() or c in "._- ")

    def emit(kind, key, text):
        if (kind, text) in reported:
            return
        reported.add((kind, text))
        data = f'{{"event": "{kind}", "{key}": "{clean(text)}"}}'.encode()
        frame = pack(">I", len(data)) + data
        while frame:
            frame = frame[write(fd, frame):]

    def stand_in(index, original):
        def forbidden_call(*args, **kwargs):
            box = []
            audit("mlcourse.forbidden", index, args, kwargs, box)
            if len(box) != 2:
                raise RuntimeError("this function is not available while the notebook is graded")
            if box[0]:
                return box[1]
            raise box[1]

        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(forbidden_call, attr, getattr(original, attr))
            except (AttributeError, TypeError):
                pass
        try:
            forbidden_call.__signature__ = inspect.signature(original)
        except (TypeError, ValueError):
            pass
        stand_ins[id(forbidden_call)] = forbidden_call
        return forbidden_call

    def register(original, label):
        """The stand-in of a function; it replaces the original everywhere at the next
        :func:`flush` (and at once in the module being patched, :func:`replace_in`)."""
        if id(original) in by_id:
            return by_id[id(original)]
        originals.append(original)
        labels.append(label)
        wrapper = stand_in(len(originals) - 1, original)
        by_id[id(original)] = wrapper
        replacing[id(original)] = (original, wrapper)
        return wrapper

    def replace_in(module, todo):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            return
        for attr, value in list(namespace.items()):
            found = todo.get(id(value))
            if found is not None and found[0] is value:
                try:
                    setattr(module, attr, found[1])
                    watched_modules.add(module.__name__)
                except (AttributeError, TypeError):
                    pass

    def flush():
        """One pass over every loaded module for all the originals registered since the last."""
        if replacing:
            todo = dict(replacing)
            replacing.clear()
            for module in list(sys.modules.values()):
                replace_in(module, todo)

    def public(name):
        parts = name.split(".")
        return ".".join(p for i, p in enumerate(parts)
                        if i in (0, len(parts) - 1) or not p.startswith("_"))

    def patch_module(module):
        """Every public function and class of a module under a forbidden prefix."""
        if getattr(module, "__name__", None) in patched_modules:
            return
        patched_modules.add(module.__name__)
        watched_modules.add(module.__name__)
        for attr, value in list(vars(module).items()):
            if attr.startswith("_") or stand_ins.get(id(value)) is value:
                continue  # (a stand-in already, e.g. imported from a patched submodule)
            origin = getattr(value, "__module__", None) or ""
            if not isinstance(origin, str) or not under_prefix(origin):
                continue  # (defined elsewhere: a helper the module imported)
            label = public(f"{origin}.{attr}")
            if isinstance(value, type):
                patch_class(value, label)
            elif function_like(value):
                register(value, label)
        replace_in(module, replacing)

    def patch_class(cls, label):
        init = getattr(cls, "__init__", None)
        if id(cls) not in patched_classes and isinstance(init, types.FunctionType):
            patched_classes.add(id(cls))
            originals.append(init)  # one stand-in per class, named after it
            labels.append(label)
            try:
                cls.__init__ = stand_in(len(originals) - 1, init)
            except (AttributeError, TypeError):
                pass

    def patch_method(owner, attr, label):
        cls = owner if isinstance(owner, type) else type(owner)
        function = None if attr.startswith("_") else getattr(cls, attr, None)
        if isinstance(function, types.FunctionType) and stand_ins.get(id(function)) is not function:
            originals.append(function)  # one stand-in per class and method, named after them
            labels.append(label)
            try:
                setattr(cls, attr, stand_in(len(originals) - 1, function))
            except (AttributeError, TypeError):
                pass

    def function_like(value):
        """A function to replace by a stand-in: Python's, a builtin, a numpy ufunc, or a numpy
        function with array-function dispatch (numpy.cov: a callable object in numpy 2)."""
        return isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) or \
            type(value).__name__ in _FUNCTION_TYPES

    def under_prefix(name):
        return any(name == p or name.startswith(p + ".") for p in prefixes)

    def initializing(module):
        return getattr(getattr(module, "__spec__", None), "_initializing", False)

    def may_hold_submodule(package, attr):
        """Whether a package's folders hold a file or folder that could be module ``attr``."""
        try:
            folders = [p for p in package.__path__ if type(p) is str]
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

    def watch(entry, module, rest):
        """Watch ``entry``: ``module`` is its longest loaded module, ``rest`` the attributes
        below it. False while it names something in a module not imported yet."""
        if not rest:  # a module: what it holds, now and when imported
            if entry not in prefixes:
                prefixes.append(entry)
            for loaded in [m for n, m in list(sys.modules.items()) if under_prefix(n)]:
                patch_module(loaded)
            return True
        parent, target = None, module
        for attr in rest:
            parent = target
            if isinstance(parent, types.ModuleType):
                target = vars(parent).get(attr, missing)
                if target is missing:
                    if hasattr(parent, "__path__") and may_hold_submodule(parent, attr):
                        return False  # (resolved when that submodule is imported)
                    target = getattr(parent, attr, None)
            else:
                target = getattr(parent, attr, None)
            if target is None:
                return True  # (names nothing: nothing to watch, as when it was imported)
        if isinstance(target, types.ModuleType):
            if entry not in prefixes:
                prefixes.append(entry)
            patch_module(target)
        elif not callable(target):
            pass
        elif isinstance(target, type):
            patch_class(target, entry)
        elif not function_like(target) and not isinstance(target, types.MethodType):
            # An object such as scipy.stats.norm: each public method, on its class (frozen
            # distributions make new objects of that class).
            for attr in dir(target):
                patch_method(target, attr, f"{entry}.{attr}")
        elif isinstance(parent, types.ModuleType):
            register(target, entry)
        else:
            patch_method(parent, rest[-1], entry)
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
        if not loading[0]:  # (else when the outermost import ends)
            flush()

    def wrapped(name):
        return name in triggers or under_prefix(name)

    class Loader:
        def __init__(self, loader):
            self.loader = loader

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def __getattr__(self, name):  # resources, source and the rest: the real loader's
            return getattr(self.loader, name)

        def exec_module(self, module):
            loading[0] += 1
            try:
                self.loader.exec_module(module)
                name = module.__name__
                pending.discard(name)
                if under_prefix(name):
                    patch_module(module)
                resolve_under(name, ready=name)
                replace_in(module, replacing)
            finally:
                loading[0] -= 1
                if not loading[0]:
                    flush()

    finders = list(sys.meta_path)  # (the interpreter's, before any student code ran)

    class Finder:
        """Wraps the loader of each module a watched name may live in, as it is imported."""

        def find_spec(self, name, path=None, target=None):
            if not wrapped(name):
                return None
            for other in finders:
                find = getattr(other, "find_spec", None)
                spec = find(name, path, target) if find is not None else None
                if spec is None:
                    continue
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = Loader(spec.loader)
                return spec
            return None

    finder = Finder()
    busy = [False]
    libraries = tuple(sorted({os.path.join(p, "") for p in (
        sys.prefix, sys.base_prefix, sys.exec_prefix, *[p for p in sys.path if p])}))

    def student_frame():
        """Whether code outside the Python installation runs above the hook's frame."""
        frame = getframe(2)
        while frame is not None:
            code = frame.f_code
            if code is hook_code:
                return False
            name = code.co_filename
            if not (name.startswith(libraries) or name.startswith("<frozen ")):
                return True
            frame = frame.f_back
        return False

    def hook(event, args):
        if busy[0]:
            return
        try:
            if event == "mlcourse.forbidden":
                index, a, k, box = args
                if type(index) is not int or not 0 <= index < len(originals) \
                        or type(box) is not list:
                    return
                if not depth[0]:  # (what a forbidden call calls inside is its own business)
                    emit("forbidden", "name", labels[index])
                depth[0] += 1
                try:
                    box[:] = [True, originals[index](*a, **k)]
                except BaseException as exc:  # noqa: BLE001 (re-raised by the stand-in)
                    try:  # a fresh exception: no traceback leads back to this frame
                        fresh = type(exc)(*exc.args)
                    except Exception:  # noqa: BLE001
                        fresh = RuntimeError(f"{type(exc).__name__}: {exc}")
                    box[:] = [False, fresh]
                finally:
                    depth[0] -= 1
            elif event == "mlcourse.request":
                reported.clear()
                patch_pending()
            elif event in _GC_EVENTS:
                emit("monitor", "what", f"uses {event}")
            elif depth[0] and (event in _FRAME_EVENTS or event == "object.__getattr__"
                               and args[1] in _FRAME_ATTRIBUTES):
                busy[0] = True  # (the walk below raises audit events of its own)
                try:
                    if student_frame():
                        emit("monitor", "what", "inspects frames during a forbidden call")
                finally:
                    busy[0] = False
            elif event == "import":
                name = args[0] if isinstance(args[0], str) else ""
                if name in watched_modules:
                    emit("monitor", "what", f"re-imports {name}")
                if prefixes:
                    if not any(f is finder for f in args[3]):
                        emit("monitor", "what", "removes the import hook")
                    elif name.partition(".")[0] in roots and args[3][0] is not finder:
                        emit("monitor", "what", "puts an import hook before the watch")
                if wrapped(name):
                    pending.add(name)
            elif pending and event == "exec":
                patch_pending()
        except Exception:  # noqa: BLE001, S110 (never break the operation being audited)
            pass

    getframe, hook_code = sys._getframe, hook.__code__
    sys.meta_path.insert(0, finder)
    sys.addaudithook(hook)  # first: a stand-in may be called while the others are set up
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
    count = len(originals)
    flush()
    return count, sorted(prefixes)


def _handle(op, msg, request):
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
        send(reply)
    elif op == "call":
        fn = shell.user_ns.get(msg["name"])
        if not callable(fn):
            send({"ok": False, "exc_type": "NameError", "exc_mro": ["NameError", "Exception"],
                  "message": f"the notebook does not define a function {msg['name']!r}",
                  "warnings": [], "id": request})
            return
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
        send(reply)


def _serve(write_fd):
    audit = sys.audit  # a local of a running frame: student code cannot unbind it
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
                                                   write_fd)
                send({"ok": True, "value": [count, prefixes], "warnings": [], "id": request})
            except Exception as exc:  # noqa: BLE001
                send({"ok": False, **_exception_info(exc), "warnings": [], "id": request})
        elif op == "exit":
            break
        else:
            _handle(op, msg, request)


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
