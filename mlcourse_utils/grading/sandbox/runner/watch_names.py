"""The watch on forbidden calls, where the watched names live: found in loaded modules and
classes, stand-ins put in place of compiled originals, and names resolved when their module is
imported (the watch itself imports nothing). Built as ``watch_stand_ins.py`` says."""

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (one namespace once joined: see seccomp.py)
    from .watch_rules import _COMPILED_TYPES


def _lookup(w):
    """Names in loaded modules: ``under_prefix``, ``initializing``, ``module_name``, ``find``."""
    ModuleType, module_vars, class_vars, class_mro = w.ModuleType, w.module_vars, \
        w.class_vars, w.class_mro
    prefixes, listings, missing = w.prefixes, w.listings, w.missing

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

    return dict(under_prefix=under_prefix, initializing=initializing, module_name=module_name,
                find=find)


def _replacing(w):
    """Compiled originals replaced by their stand-ins in modules (``replace_in``) and in their
    package's tables, for all found since the last pass (``flush``)."""
    FunctionType, ModuleType, module_vars, module_name = w.FunctionType, w.ModuleType, \
        w.module_vars, w.module_name
    _filled, packages, replacing, watched_modules = w._filled, w.packages, w.replacing, \
        w.watched_modules

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

    return dict(replace_in=replace_in, flush=flush)


def _resolving(w):
    """Watching a name once its module is loaded: ``patch_module`` (a forbidden prefix),
    ``resolve`` and ``resolve_under`` (names not resolved yet), ``patch_pending`` (modules
    imported around the import hook), ``wrapped`` (whether the hook wraps a module's loader)."""
    FunctionType, ModuleType, class_vars, module_vars = w.FunctionType, w.ModuleType, \
        w.class_vars, w.module_vars
    module_name, under_prefix, initializing, find = w.module_name, w.under_prefix, \
        w.initializing, w.find
    watch_function, watch_callable, watch_class, watch_methods = w.watch_function, \
        w.watch_callable, w.watch_class, w.watch_methods
    replace_in, flush, keep_baseline, missing = w.replace_in, w.flush, w.keep_baseline, w.missing
    patched_modules, watched_modules, replacing = w.patched_modules, w.watched_modules, \
        w.replacing
    prefixes, lazy, triggers, pending = w.prefixes, w.lazy, w.triggers, w.pending

    def public(name):
        parts = name.split(".")
        return ".".join(p for i, p in enumerate(parts)
                        if i in (0, len(parts) - 1) or not p.startswith("_"))

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

    return dict(patch_module=patch_module, resolve=resolve, resolve_under=resolve_under,
                patch_pending=patch_pending, wrapped=wrapped)
