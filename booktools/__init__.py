"""Maintenance tools of the book itself, behind one entry point: ``python -m booktools build|check``.

Its steps read notebooks with nbformat, which imports jsonschema; imported first the way labkit
imports it, jsonschema leaves out the URI-format libraries (their grammars cost 1.6 s a process).
"""

from labkit.core.strictjson import import_jsonschema

import_jsonschema()
