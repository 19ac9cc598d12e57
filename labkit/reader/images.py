"""A PNG shown at a chosen width, in JupyterLab and in the static book alike.

IPython's ``Image(data, width=N)`` keeps the width in the output's metadata, which the static
book's theme ignores (it showed a 384-px request at the PNG's own 512 px). An ``<img width>``
element carries the width in the output itself, so every host honours it.
"""

from __future__ import annotations

import base64
import io


class PNG:
    """PNG bytes displayed ``width`` CSS pixels wide (height in proportion).

    ``text/plain`` names the size only, so a stored output does not change with the bytes.
    """

    def __init__(self, data: bytes, width: int, alt: str = ""):
        from PIL import Image

        if not isinstance(data, (bytes, bytearray)) or not bytes(data).startswith(b"\x89PNG\r\n\x1a\n"):
            raise ValueError(f"data must be the bytes of a PNG file, got {type(data).__name__}")
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive number of pixels, got {width!r}")
        self.data = bytes(data)
        self.width = width
        self.alt = alt
        self.natural_size = Image.open(io.BytesIO(self.data)).size  # (width, height)

    @property
    def height(self) -> int:
        natural_width, natural_height = self.natural_size
        return round(natural_height * self.width / natural_width)

    def __repr__(self) -> str:
        natural_width, natural_height = self.natural_size
        return f"PNG {natural_width}×{natural_height} px, shown {self.width}×{self.height}"

    def _repr_html_(self) -> str:
        from html import escape

        encoded = base64.b64encode(self.data).decode("ascii")
        return (
            f'<img src="data:image/png;base64,{encoded}" width="{self.width}" '
            f'height="{self.height}" alt="{escape(self.alt)}">'
        )
