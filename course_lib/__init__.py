"""course_lib: the small library under the "Memory for an LLM chat" course notebooks.

Importing it makes tiktoken's encodings available offline (see `course_lib.tokenizer`): after
`import course_lib`, a plain `tiktoken.get_encoding("o200k_base")` reads verified local files.

It does so without importing tiktoken itself: if tiktoken is already imported, the files are put
in place now; otherwise just before tiktoken's own code first runs (a one-shot import hook). So
`import course_lib.checking` — the checker the grader runs on a bare `python3` with no packages —
imports nothing outside the standard library.
"""

import importlib.abc as _abc
import importlib.machinery as _machinery
import sys as _sys

__version__ = "0.1.0"


def _install_offline_encodings() -> None:
    # Two stat() calls once the files are in place; the first import unpacks and verifies them.
    tokenizer = _sys.modules.get("course_lib.tokenizer")
    install = getattr(tokenizer, "install_offline_encodings", None)
    if install is None and tokenizer is None:
        from course_lib.tokenizer import install_offline_encodings as install
    elif install is None:
        # course_lib.tokenizer is itself in the middle of `import tiktoken`: use a private copy.
        import importlib.util

        spec = importlib.util.spec_from_file_location("course_lib._tokenizer_setup", tokenizer.__file__)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        install = module.install_offline_encodings
    install()


class _PrepareTiktoken(_abc.MetaPathFinder):
    """Before tiktoken's code first runs, put the verified encoding files where it looks."""

    def find_spec(self, name, path=None, target=None):
        if name != "tiktoken":
            return None
        _sys.meta_path[:] = [finder for finder in _sys.meta_path if finder is not self]
        spec = _machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _InstallingLoader(spec.loader)
        return spec


class _InstallingLoader(_abc.Loader):
    def __init__(self, loader) -> None:
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        _install_offline_encodings()


if "tiktoken" in _sys.modules:
    _install_offline_encodings()
else:
    _sys.meta_path.insert(0, _PrepareTiktoken())
