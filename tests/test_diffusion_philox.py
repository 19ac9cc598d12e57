"""Philox4x32-10 against Random123's known answers, a plain-int reference, and Box–Muller."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.diffusion import philox4x32_10, seed_to_key
from labkit.diffusion.normal import PhiloxNormalStream, blocks_to_normals, box_muller, uint32_to_uniform
from labkit.diffusion.philox import block_counters

# Random123 kat_vectors, philox4x32_10: (counter, key, expected output)
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


def hexwords(words):
    return " ".join(f"{int(w):08x}" for w in np.asarray(words).reshape(-1))


@pytest.mark.parametrize("counter, key, expected", KNOWN_ANSWERS, ids=["zeros", "ones", "pi"])
def test_philox_matches_random123_known_answer(counter, key, expected):
    got = philox4x32_10(np.array(counter, dtype=np.uint32), np.array(key, dtype=np.uint32))
    assert got.dtype == np.uint32
    assert hexwords(got) == hexwords(expected), f"counter {hexwords(counter)} key {hexwords(key)}"


def test_philox_batch_equals_one_counter_at_a_time():
    counters = np.array([kat[0] for kat in KNOWN_ANSWERS[:1]] * 3 + [[5, 6, 7, 8]], dtype=np.uint32)
    key = np.array([0xA4093822, 0x299F31D0], dtype=np.uint32)
    batched = philox4x32_10(counters.reshape(2, 2, 4), key).reshape(4, 4)
    single = np.stack([philox4x32_10(c, key) for c in counters])
    assert np.array_equal(batched, single), f"batched {batched.tolist()} vs single {single.tolist()}"


def _reference_philox(counter, key):
    """Random123's algorithm on Python integers (arbitrary precision, explicit mod 2³²)."""
    mask = 0xFFFFFFFF
    c, (k0, k1) = list(counter), key
    for round_index in range(10):
        if round_index:
            k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & mask, p1 & mask, ((p0 >> 32) ^ c[3] ^ k1) & mask, p0 & mask]
    return c


words = st.integers(min_value=0, max_value=0xFFFFFFFF)


@settings(max_examples=40, deadline=None)
@given(counter=st.tuples(words, words, words, words), key=st.tuples(words, words))
def test_vectorised_philox_equals_python_int_reference(counter, key):
    got = philox4x32_10(np.array(counter, dtype=np.uint32), np.array(key, dtype=np.uint32))
    want = _reference_philox(counter, key)
    assert got.tolist() == want, f"numpy {hexwords(got)} vs python {hexwords(want)}"


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.zeros(3, np.uint32), r"counters must have shape \[\.\.\., 4\]"),
        (np.zeros(4, np.float32), "unsigned 32-bit"),
        (np.array([0, 0, 0, 2**32], dtype=np.int64), r"\[0, 2\*\*32 - 1\]"),
    ],
)
def test_philox_rejects_bad_counters(bad, message):
    with pytest.raises(ValueError, match=message):
        philox4x32_10(bad, np.zeros(2, np.uint32))


def test_seed_mapping_and_errors():
    assert seed_to_key(314159).tolist() == [314159, 0]
    assert seed_to_key(2**32 + 5).tolist() == [5, 1]
    for bad in (-1, 2**64, 1.5, True):
        with pytest.raises(ValueError, match="seed must be an integer"):
            seed_to_key(bad)


def test_block_counters_carry_into_the_second_word():
    words = block_counters(2**32 - 1, 2)
    assert words.tolist() == [[0xFFFFFFFF, 0, 0, 0], [0, 1, 0, 0]]


def test_uniform_never_reaches_zero_or_one():
    u = uint32_to_uniform(np.array([0, 0xFFFFFFFF], dtype=np.uint32))
    assert u[0] == 2.0**-33 and u[1] == 1 - 2.0**-33, f"extremes {u.tolist()}"
    n1, n2 = box_muller(u[:1], u[1:])
    assert np.isfinite(n1).all() and np.isfinite(n2).all()
    with pytest.raises(ValueError, match="u1 must lie strictly inside"):
        box_muller(np.array([0.0]), np.array([0.5]))


def test_box_muller_on_one_block_by_hand():
    words = np.array([[0x80000000, 0x40000000, 0xFFFFFFFF, 0]], dtype=np.uint32)
    u = (words.astype(np.float64) + 0.5) / 2**32
    r1, r2 = np.sqrt(-2 * np.log(u[0, 0])), np.sqrt(-2 * np.log(u[0, 2]))
    want = [
        r1 * np.cos(2 * np.pi * u[0, 1]),
        r1 * np.sin(2 * np.pi * u[0, 1]),
        r2 * np.cos(2 * np.pi * u[0, 3]),
        r2 * np.sin(2 * np.pi * u[0, 3]),
    ]
    got = blocks_to_normals(words)
    assert np.allclose(got, want, rtol=0, atol=1e-15), f"normals {got.tolist()} vs {want}"


def test_stream_counts_blocks_and_normals_look_standard():
    stream = PhiloxNormalStream(seed=314159)
    first = stream.normals(16384)
    assert (first.counter_before, first.counter_after) == (0, 4096)
    second = stream.normals(8)
    assert (second.counter_before, second.counter_after) == (4096, 4098)
    again = PhiloxNormalStream(seed=314159, counter=4096).normals(8)
    assert np.array_equal(again.values, second.values), "resuming at counter 4096 must replay the stream"
    mean, std = first.values.mean(), first.values.std()
    assert abs(mean) < 0.03 and abs(std - 1) < 0.03, f"mean {mean:.4f}, std {std:.4f} of 16384 normals"
    with pytest.raises(ValueError, match="multiple of 4"):
        stream.normals(6)
