#!/usr/bin/env python3
"""Builds the Python API reference of the installed `bmmc` package with pdoc and fails on what would mislead.

Usage: python_reference.py OUTPUT_DIR [MODULE ...]   (default modules: bmmc bmmc.distributed)

It fails (exit 1, each problem on standard error) when
  - a module does not import, or pdoc warns while reading or rendering it (every warning is an error), or
  - a docstring names something of the package that does not exist: a dotted name whose first part is `bmmc`
    (`bmmc.permute`, `bmmc.distributed.permute`) or a public name of the package (`Bmmc.inverse`), checked by
    importing and looking it up, the way a reader would follow it.
File names (`bmmc/_fast.py`) and names of other packages (`np.zeros`, `torch.ops.bmmc`) are not references.

Functions of the native module (nanobind) carry their signature as the first line of their docstring, which
pdoc cannot read as one; the signature is taken from there and shown as a Python function's is.
"""

import collections.abc
import functools
import importlib
import re
import sys
import typing
import warnings
from pathlib import Path

import pdoc
import pdoc.doc

NATIVE_SIGNATURE = re.compile(r"(\w+)\((.*)\)(?: -> (.+))?")


def native_signature(obj):
    """(inspect.Signature, docstring without it) of a nanobind function with one overload, or None."""
    overloads = getattr(obj, "__nb_signature__", None)
    doc = getattr(obj, "__doc__", None) or ""
    first, _, rest = doc.partition("\n")
    match = NATIVE_SIGNATURE.fullmatch(first.strip())
    if not overloads or len(overloads) != 1 or not match:
        return None
    params, returns = match.group(2), match.group(3)
    namespace = {"collections": collections, "typing": typing, obj.__module__.split(".")[0]:
                 importlib.import_module(obj.__module__.split(".")[0])}
    try:
        exec(f"def f({params}){' -> ' + returns if returns else ''}: pass", namespace)  # noqa: S102
        signature = pdoc.doc._PrettySignature.from_callable(namespace["f"])
    except Exception:  # noqa: BLE001 - a signature Python cannot spell (e.g. an ndarray[...] type): left as is
        return None
    return signature, rest.lstrip("\n")


def show_native_signatures():
    """Makes pdoc's Function take a nanobind function's signature from its docstring's first line."""
    plain_signature = pdoc.doc.Function.signature.func
    plain_docstring = pdoc.doc.Function.docstring.func

    def signature(self):
        native = native_signature(self.obj)
        return native[0] if native else plain_signature(self)

    def docstring(self):
        native = native_signature(self.obj)
        return native[1] if native else plain_docstring(self)

    for name, fn in (("signature", signature), ("docstring", docstring)):
        prop = functools.cached_property(fn)
        prop.__set_name__(pdoc.doc.Function, name)
        setattr(pdoc.doc.Function, name, prop)

# A dotted name not glued to a path, a URL or a longer dotted name: `bmmc.permute`, `Bmmc.from_rows`.
DOTTED = re.compile(r"(?<![\w./\\-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w/\\-])")


def resolves(name, package):
    """Whether the dotted `name` exists in the package: modules imported, then attributes looked up."""
    parts = name.split(".")
    if parts[0] == package.__name__:
        obj, rest = package, parts[1:]
    else:
        obj, rest = package, parts
    path = package.__name__
    for part in rest:
        path += "." + part
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(path)
        except ImportError:
            return False
    return True


def docstrings(doc):
    """(qualified name, docstring) of a pdoc object and of everything documented under it."""
    yield doc.fullname, doc.docstring
    for member in getattr(doc, "own_members", []):
        yield from docstrings(member)


def broken_references(modules, package):
    """Every 'module.object: name' whose docstring names a `package` object that does not exist."""
    public = {n for n in getattr(package, "__all__", dir(package)) if not n.startswith("_")}
    found = []
    for module in modules:
        for where, text in docstrings(module):
            for name in DOTTED.findall(text or ""):
                root = name.split(".", 1)[0]
                if (root == package.__name__ or root in public) and not resolves(name, package):
                    found.append(f"{where}: `{name}` names nothing in the {package.__name__} package")
    return sorted(set(found))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    names = argv[2:] or ["bmmc", "bmmc.distributed"]
    problems = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            show_native_signatures()
            pdoc.render.configure(docformat="restructuredtext")
            pdoc.pdoc(*names, output_directory=out)
            modules = [pdoc.doc.Module.from_name(n) for n in names]
        except Exception as e:  # noqa: BLE001 - any failure to import or render fails the reference
            cause = f" ({type(e.__cause__).__name__}: {e.__cause__})" if e.__cause__ else ""
            print(f"python reference: {type(e).__name__}: {e}{cause}", file=sys.stderr)
            return 1
    problems += [f"pdoc warning: {w.message}" for w in caught]
    package = importlib.import_module(names[0].split(".")[0])
    problems += broken_references(modules, package)
    for p in problems:
        print(f"python reference: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"python reference: {', '.join(names)} -> {out}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
