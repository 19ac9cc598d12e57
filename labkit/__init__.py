"""labkit: the kernels, runtimes, widgets and fixture loaders of *Inside One Generation*.

Importing the package is cheap on purpose: every submodule is imported only when used,
so ``import labkit`` never pulls in matplotlib, ipywidgets or Jupyter.
"""

__version__ = "0.1.0"
