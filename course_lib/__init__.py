"""course_lib: the small library under the "Memory for an LLM chat" course notebooks.

Importing it makes tiktoken's encodings available offline (see `course_lib.tokenizer`): after
`import course_lib`, a plain `tiktoken.get_encoding("o200k_base")` reads verified local files.
"""

from course_lib.tokenizer import install_offline_encodings as _install_offline_encodings

# Two stat() calls once the files are in place; the first import unpacks and verifies them.
_install_offline_encodings()

__version__ = "0.1.0"
