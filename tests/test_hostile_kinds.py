"""Two kinds of hostile input refused by name (issue 43): weights narrower than the model's dtype (float16
cast up silently changed the traces) and a wall-clock time a clock change repeats (the runtime picked
one of the two instants without a word)."""

import numpy as np
import pytest

from labkit.nn import DecoderWeights
from labkit.text.model import load_decoder
from labkit.tools.normalize import local_start


def test_float16_weights_are_refused_by_name():
    decoder = load_decoder()
    arrays = decoder.weights.to_arrays()
    narrowed = {**arrays, "embedding": arrays["embedding"].astype(np.float16)}
    with pytest.raises(ValueError, match=r"weight 'embedding' of .* must be float32.*got float16"):
        DecoderWeights.from_arrays(narrowed, decoder.config)
    assert DecoderWeights.from_arrays(arrays, decoder.config) is not None


@pytest.mark.parametrize(
    ("local_date", "local_time", "said"),
    [
        ("2026-10-25", "01:30", r"occurs twice in Europe/London .* \+01:00 and \+00:00"),
        ("2026-03-29", "01:30", "does not exist in Europe/London"),
    ],
)
def test_a_wall_clock_time_a_clock_change_repeats_or_skips_is_refused(local_date, local_time, said):
    with pytest.raises(ValueError, match=said):
        local_start(local_date, local_time, "Europe/London")


def test_an_ordinary_time_keeps_its_offset():
    assert local_start("2026-10-25", "03:30", "Europe/London").isoformat() == "2026-10-25T03:30:00+00:00"
    assert local_start("2026-07-20", "09:00", "Asia/Shanghai").isoformat() == "2026-07-20T09:00:00+08:00"
