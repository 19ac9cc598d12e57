"""The book's JupyterLab, beside labkit: ``launcher`` (``labkit lab``, ``make lab``), ``edits`` (the reader's
working copies and ``labkit reset``), ``contents`` (the contents manager: pages never written, hover text),
``kernel`` (the kernel extension: the cell a page run out of order needs) and ``glossary`` (the hover text,
and the book check's glossary links).

It imports labkit; labkit never imports it.  It runs from the book's clone: ``labkit lab`` and
``labkit reset`` load it from there (``labkit.cli``'s ``BOOK_COMMANDS``), and the launcher puts the clone
on the server's and kernels' path.
"""
