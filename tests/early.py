"""Loaded before pytest's other plugins (``-p tests.early``, pyproject's addopts).

nbval imports nbformat, which imports jsonschema, which imports the libraries of formats no
schema here uses when they are installed (JupyterLab's dependencies install them):
``rfc3987_syntax`` alone compiles 38 grammars, 1.6 s in every pytest process and xdist worker.
jsonschema imported first, the way labkit imports it (``import_jsonschema``), leaves them out.
"""

from labkit.core.strictjson import import_jsonschema

import_jsonschema()
