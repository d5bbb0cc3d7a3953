"""The watch on forbidden calls, its rules: how it works, the events and names it knows, the
texts of its stand-in and import hook (made from constants only)."""

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
