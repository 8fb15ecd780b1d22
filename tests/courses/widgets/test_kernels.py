"""courses/widgets/kernels.py: the seed chapter's printed outputs, properties and edge cases."""

from __future__ import annotations

import ast
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from courses.widgets import kernels

PROPERTY = settings(max_examples=60, deadline=None)
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


def vectors(min_size: int = 1, max_size: int = 32):
    return hnp.arrays(np.float64, st.integers(min_size, max_size), elements=finite)


# --- seed test vectors ----------------------------------------------------------------------


def test_attention_seed_vector_shapes_and_row_sums():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4, 8))
    out, w = kernels.attention(Q, K, V)
    assert out.shape == (4, 8)
    assert w.shape == (4, 4)
    assert w.sum(axis=-1).round(6).tolist() == [1.0, 1.0, 1.0, 1.0]


def test_attention_seed_vector_matches_the_seed_listing():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4, 8))
    s = Q @ K.T / np.sqrt(8)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    out, weights = kernels.attention(Q, K, V)
    np.testing.assert_allclose(weights, w, rtol=1e-12)
    np.testing.assert_allclose(out, w @ V, rtol=1e-12)


def test_layer_norm_seed_vector():
    y = kernels.layer_norm([2, 4, 6, 8])
    assert y.round(3).tolist() == [-1.342, -0.447, 0.447, 1.342]
    assert round(abs(y.mean()), 6) == 0.0
    assert round(y.std(), 3) == 1.0


def test_adam_seed_vector_200_steps_on_theta_squared():
    theta, m, v = kernels.adam(lambda th: 2 * th, 3.0, 200, lr=0.1)
    assert len(theta) == len(m) == len(v) == 201
    assert theta[0] == 3.0 and m[0] == 0.0 and v[0] == 0.0
    assert round(float(theta[-1]), 4) == -0.0001


def test_adam_matches_the_seed_listing_step_by_step():
    def adam_step(theta, g, m, v, t, eta=0.1, b1=0.9, b2=0.999, eps=1e-8):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        return theta - eta * m_hat / (np.sqrt(v_hat) + eps), m, v

    expected, m, v = [3.0], 0.0, 0.0
    for t in range(1, 201):
        theta, m, v = adam_step(expected[-1], 2 * expected[-1], m, v, t)
        expected.append(theta)
    theta, _m, _v = kernels.adam(lambda th: 2 * th, 3.0, 200, lr=0.1)
    np.testing.assert_allclose(theta, expected, rtol=1e-12, atol=1e-15)


def test_adam_array_theta_matches_scalar_theta():
    scalar, m1, v1 = kernels.adam(lambda th: 2 * th, 3.0, 50, lr=0.1)
    arr, m2, v2 = kernels.adam(lambda th: 2 * th, np.array([3.0, -1.0]), 50, lr=0.1)
    assert arr.shape == (51, 2)
    np.testing.assert_allclose(arr[:, 0], scalar, rtol=1e-12)
    np.testing.assert_allclose(m2[:, 0], m1, rtol=1e-12)
    np.testing.assert_allclose(v2[:, 0], v1, rtol=1e-12)


# --- properties -----------------------------------------------------------------------------


@PROPERTY
@given(vectors(), st.floats(0.05, 20))
def test_softmax_sums_to_one(x, tau):
    p = kernels.softmax(x, temperature=tau)
    assert p.dtype == np.float64
    assert math.isclose(p.sum(), 1.0, rel_tol=1e-12)
    assert (p >= 0).all()


@PROPERTY
@given(vectors(), st.floats(-1e3, 1e3))
def test_softmax_is_shift_invariant(x, c):
    np.testing.assert_allclose(kernels.softmax(x + c), kernels.softmax(x), rtol=1e-9, atol=1e-12)


@PROPERTY
@given(st.integers(1, 12), st.integers(1, 9), st.integers(0, 2**32 - 1), st.floats(0.1, 5))
def test_attention_causal_mask_gives_zero_weight_above_the_diagonal(n, d, seed, tau):
    Q, K, V = np.random.default_rng(seed).normal(size=(3, n, d))
    out, w = kernels.attention(Q, K, V, mask=kernels.causal_mask(n), temperature=tau)
    assert (w[np.triu_indices(n, k=1)] == 0.0).all()
    np.testing.assert_allclose(w.sum(axis=-1), np.ones(n), rtol=1e-12)
    np.testing.assert_allclose(out[0], V[0], rtol=1e-12)  # the first token sees only itself


@PROPERTY
@given(vectors(min_size=2), st.floats(1e-8, 1e-2))
def test_layer_norm_has_mean_zero_and_unit_variance_up_to_eps(x, eps):
    var = x.var()
    y = kernels.layer_norm(x, eps=eps)
    assert abs(y.mean()) <= 1e-9
    # The biased variance of the output is σ² / (σ² + ε) = 1 − O(ε).
    np.testing.assert_allclose(y.var(), var / (var + eps), rtol=1e-9, atol=1e-12)


@PROPERTY
@given(st.floats(-1e6, 1e6), st.integers(1, 64), st.floats(-10, 10), st.floats(1e-8, 1))
def test_rms_norm_of_a_constant_vector(a, d, gamma, eps):
    y = kernels.rms_norm(np.full(d, a), gamma=gamma, eps=eps)
    expected = a / math.sqrt(a * a + eps) * gamma
    np.testing.assert_allclose(y, np.full(d, expected), rtol=1e-9, atol=1e-12)


@PROPERTY
@given(st.integers(1, 16), st.integers(1, 64).map(lambda h: 2 * h), st.integers(0, 2**32 - 1))
def test_rope_preserves_norms(T, d, seed):
    x = np.random.default_rng(seed).normal(size=(T, d))
    y = kernels.rope(x)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)


@PROPERTY
@given(
    st.integers(1, 32).map(lambda h: 2 * h),
    st.integers(0, 2**32 - 1),
    st.integers(0, 500),
    st.integers(0, 500),
    st.integers(0, 200),
    st.sampled_from([100.0, 10000.0, 500000.0]),
)
def test_rope_scores_depend_only_on_the_offset(d, seed, m1, m2, offset, base):
    q, k = np.random.default_rng(seed).normal(size=(2, d))
    s1 = kernels.rope(q, m1, base) @ kernels.rope(k, m1 + offset, base)
    s2 = kernels.rope(q, m2, base) @ kernels.rope(k, m2 + offset, base)
    assert math.isclose(s1, s2, rel_tol=1e-9, abs_tol=1e-9 * (np.abs(q) @ np.abs(k) + 1))


@PROPERTY
@given(st.floats(0.0, 0.99), st.floats(0.0, 0.9999), st.floats(1e-3, 10), st.booleans())
def test_adam_first_step_without_bias_correction_is_scaled(beta1, beta2, size, negative):
    g = -size if negative else size
    kwargs = {"lr": 0.01, "beta1": beta1, "beta2": beta2, "eps": 1e-12}
    corrected, _m, _v = kernels.adam(lambda th: g, 0.0, 1, **kwargs)
    raw, _m, _v = kernels.adam(lambda th: g, 0.0, 1, bias_correction=False, **kwargs)
    ratio = (raw[1] - raw[0]) / (corrected[1] - corrected[0])
    assert math.isclose(ratio, (1 - beta1) / math.sqrt(1 - beta2), rel_tol=1e-6)


def test_adam_first_step_ratio_at_default_betas_is_about_3_16():
    corrected, _m, _v = kernels.adam(lambda th: 2 * th, 3.0, 1)
    raw, _m, _v = kernels.adam(lambda th: 2 * th, 3.0, 1, bias_correction=False)
    assert round((raw[1] - raw[0]) / (corrected[1] - corrected[0]), 2) == 3.16


# --- numerical edge cases and errors ----------------------------------------------------------


def test_softmax_huge_logits_stay_finite():
    p = kernels.softmax([1e308, -1e308, 1e308])
    assert p.tolist() == [0.5, 0.0, 0.5]
    assert kernels.softmax([1.0, 2.0], temperature=1e-300).tolist() == [0.0, 1.0]
    assert np.isfinite(kernels.softmax(np.array([1e300, 1e300]), temperature=1e-10)).all()


def test_softmax_temperature_extremes_go_from_argmax_to_uniform():
    x = [2.0, 1.0, 0.5]
    assert kernels.softmax(x, temperature=1e-3).round(6).tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(kernels.softmax(x, temperature=1e6), [1 / 3] * 3, rtol=1e-5)


def test_softmax_fully_masked_row_raises_instead_of_nan():
    with pytest.raises(ValueError, match="masked"):
        kernels.softmax([[0.0, 1.0], [-np.inf, -np.inf]])


@pytest.mark.parametrize("bad", [[np.nan, 1.0], [np.inf, 1.0]])
def test_softmax_rejects_nan_and_plus_infinity(bad):
    with pytest.raises(ValueError, match="NaN or \\+infinity"):
        kernels.softmax(bad)


@pytest.mark.parametrize("tau", [0.0, -1.0, np.nan, np.inf])
def test_softmax_rejects_bad_temperature(tau):
    with pytest.raises(ValueError, match="temperature"):
        kernels.softmax([1.0, 2.0], temperature=tau)


def test_causal_mask_values():
    m = kernels.causal_mask(3)
    assert m.tolist() == [[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]]
    assert m.dtype == np.float64


def test_attention_boolean_keep_mask_equals_additive_mask():
    Q, K, V = np.random.default_rng(1).normal(size=(3, 5, 4))
    keep = np.tril(np.ones((5, 5), dtype=bool))
    out_b, w_b = kernels.attention(Q, K, V, mask=keep)
    out_a, w_a = kernels.attention(Q, K, V, mask=kernels.causal_mask(5))
    np.testing.assert_array_equal(w_b, w_a)
    np.testing.assert_array_equal(out_b, out_a)


def test_attention_mask_broadcasts_over_batch_and_heads():
    Q, K, V = np.random.default_rng(2).normal(size=(3, 2, 3, 6, 4))  # (batch, heads, T, d)
    out, w = kernels.attention(Q, K, V, mask=kernels.causal_mask(6))
    assert out.shape == (2, 3, 6, 4) and w.shape == (2, 3, 6, 6)
    assert (w[..., np.triu_indices(6, k=1)[0], np.triu_indices(6, k=1)[1]] == 0).all()


def test_attention_temperature_divides_the_scores():
    Q, K, V = np.random.default_rng(3).normal(size=(3, 4, 8))
    _o, w2 = kernels.attention(Q, K, V, temperature=2.0)
    _o, w1 = kernels.attention(Q / 2.0, K, V)
    np.testing.assert_allclose(w2, w1, rtol=1e-12)


def test_attention_fully_masked_row_is_a_clear_error():
    Q, K, V = np.ones((3, 2, 2))
    keep = np.array([[True, False], [False, False]])
    with pytest.raises(ValueError, match="masked"):
        kernels.attention(Q, K, V, mask=keep)


@pytest.mark.parametrize(
    ("Q", "K", "V", "message"),
    [
        (np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 3)), "share d_k"),
        (np.ones((2, 3)), np.ones((2, 3)), np.ones((5, 3)), "one row per key"),
        (np.ones(3), np.ones(3), np.ones(3), "at least 2-D"),
        (np.full((2, 3), 1e200), np.full((2, 3), 1e200), np.ones((2, 3)), "overflow"),
    ],
)
def test_attention_wrong_shapes_and_overflow_raise(Q, K, V, message):
    with pytest.raises(ValueError, match=message):
        kernels.attention(Q, K, V)


def test_attention_mask_that_does_not_broadcast_raises():
    Q, K, V = np.ones((3, 4, 2))
    with pytest.raises(ValueError, match="broadcast"):
        kernels.attention(Q, K, V, mask=np.zeros((3, 3)))


def test_norms_of_huge_and_tiny_inputs_are_finite():
    assert kernels.layer_norm([1e308, -1e308]).round(6).tolist() == [1.0, -1.0]
    assert kernels.rms_norm([1e300, 1e300]).round(6).tolist() == [1.0, 1.0]
    assert kernels.layer_norm([5.0, 5.0, 5.0]).tolist() == [0.0, 0.0, 0.0]
    assert kernels.rms_norm([0.0, 0.0]).tolist() == [0.0, 0.0]
    assert np.isfinite(kernels.layer_norm([1e-310, -1e-310])).all()


def test_norms_work_over_the_last_axis_with_vector_gamma_and_beta():
    x = np.array([[2.0, 4.0, 6.0, 8.0], [1.0, 1.0, 1.0, 5.0]])
    y = kernels.layer_norm(x, gamma=np.array([1, 2, 3, 4.0]), beta=np.array([0, 0, 0, 1.0]))
    assert y.shape == (2, 4)
    np.testing.assert_allclose(y[0], kernels.layer_norm(x[0]) * [1, 2, 3, 4] + [0, 0, 0, 1])
    r = kernels.rms_norm(x)
    np.testing.assert_allclose(r[1], x[1] / np.sqrt((x[1] ** 2).mean() + 1e-5))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"beta1": 1.0}, "beta1"),
        ({"beta2": -0.1}, "beta2"),
        ({"lr": 0.0}, "lr"),
        ({"eps": 0.0}, "eps"),
        ({"steps": -1}, "steps"),
        ({"steps": 2.5}, "steps"),
    ],
)
def test_adam_rejects_bad_settings(kwargs, message):
    args = {"steps": 3, **kwargs}
    with pytest.raises(ValueError, match=message):
        kernels.adam(lambda th: 2 * th, 1.0, **args)


def test_adam_non_finite_gradient_is_reported_with_its_step():
    with pytest.raises(ValueError, match="step 4"):  # θ_3 < 0.9975, so step 4 sees inf
        kernels.adam(lambda th: np.inf if th < 0.9975 else 2 * th, 1.0, 5, lr=0.001)


def test_sgd_stops_when_it_diverges():
    theta = kernels.sgd(lambda th: 4 * th**3, 3.0, 100, lr=0.1)
    assert len(theta) < 101
    assert abs(theta[-1]) > 1e12
    assert kernels.sgd(lambda th: 2 * th, 3.0, 10, lr=0.1).round(6).tolist()[:3] == [3.0, 2.4, 1.92]


def test_rope_position_zero_is_identity_and_validates_input():
    x = np.random.default_rng(4).normal(size=(3, 6))
    np.testing.assert_allclose(kernels.rope(x)[0], x[0])
    np.testing.assert_allclose(kernels.rope(x, positions=[0, 0, 0]), x)
    with pytest.raises(ValueError, match="even"):
        kernels.rope(np.ones((2, 3)))
    with pytest.raises(ValueError, match="base"):
        kernels.rope(np.ones((2, 4)), base=0.0)


def test_rope_rotates_the_pair_i_and_i_plus_half():
    x = np.array([1.0, 0.0, 0.0, 0.0])  # pair (0, 2) has frequency base^0 = 1
    y = kernels.rope(x, positions=np.pi / 2)
    np.testing.assert_allclose(y, [0.0, 0.0, 1.0, 0.0], atol=1e-15)


def test_entropy_uniform_and_one_hot():
    assert math.isclose(kernels.entropy(np.full(8, 1 / 8)), math.log(8))
    assert kernels.entropy([1.0, 0.0, 0.0]) == 0.0


def test_kernels_module_imports_no_django():
    tree = ast.parse(Path(kernels.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "django" not in imported
    assert imported <= {"__future__", "math", "collections", "numpy"}


def test_kernels_module_loads_no_django_in_a_fresh_interpreter():
    code = (
        "import sys; import courses.widgets.kernels; "
        "print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
    )
    assert out.stdout.strip() == "[]"


# --- log_softmax, cross_entropy, multi-head attention, AdamW ------------------------------------


@PROPERTY
@given(vectors(2), st.floats(0.05, 20))
def test_log_softmax_is_the_log_of_softmax(x, tau):
    np.testing.assert_allclose(
        np.exp(kernels.log_softmax(x, temperature=tau)),
        kernels.softmax(x, temperature=tau),
        rtol=1e-9,
        atol=1e-300,
    )


def test_log_softmax_of_huge_logits_stays_exact():
    assert kernels.log_softmax([1000.0, 0.0]).tolist() == [0.0, -1000.0]
    assert kernels.log_softmax([0.0, -np.inf]).tolist() == [0.0, -np.inf]
    with pytest.raises(ValueError, match="every position masked"):
        kernels.log_softmax([-np.inf, -np.inf])


def test_cross_entropy_of_uniform_logits_is_log_of_the_class_count():
    assert math.isclose(kernels.cross_entropy(np.zeros((3, 5)), np.array([0, 2, 4])), math.log(5))


def test_cross_entropy_is_the_mean_negative_log_probability_of_the_target():
    logits = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]])
    target = np.array([0, 1])
    p = kernels.softmax(logits)
    expected = -(math.log(p[0, 0]) + math.log(p[1, 1])) / 2
    assert math.isclose(kernels.cross_entropy(logits, target), expected)
    assert math.isclose(kernels.cross_entropy(logits.T, target, axis=0), expected)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (np.array([0, 3]), "class index from 0 to 2"),
        (np.array([0, -1]), "class index from 0 to 2"),
        (np.array([0.0, 1.0]), "whole numbers"),
        (np.array([0, 1, 2]), "does not match the rows"),
    ],
)
def test_cross_entropy_rejects_bad_targets(target, message):
    with pytest.raises(ValueError, match=message):
        kernels.cross_entropy(np.zeros((2, 3)), target)


def _heads_one_by_one(x, w_q, w_k, w_v, w_o, heads, mask=None):
    d_head = x.shape[1] // heads
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    outs, weights = [], []
    for h in range(heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        scores = q[:, cols] @ k[:, cols].T / math.sqrt(d_head) + (0 if mask is None else mask)
        w = kernels.softmax(scores)
        outs.append(w @ v[:, cols])
        weights.append(w)
    return np.concatenate(outs, axis=1) @ w_o, np.stack(weights)


@pytest.mark.parametrize(("heads", "causal"), [(1, False), (2, True), (4, False), (8, True)])
def test_multi_head_attention_matches_the_heads_computed_one_by_one(heads, causal):
    rng = np.random.default_rng(heads)
    x = rng.normal(size=(5, 8))
    ws = rng.normal(size=(4, 8, 8)) / math.sqrt(8)
    mask = kernels.causal_mask(5) if causal else None
    out, weights = kernels.multi_head_attention(x, *ws, heads=heads, mask=mask)
    ref_out, ref_weights = _heads_one_by_one(x, *ws, heads, mask)
    assert out.shape == (5, 8) and weights.shape == (heads, 5, 5)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights, ref_weights, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
    if causal:
        assert (weights[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0).all()


def test_multi_head_attention_with_one_head_and_identity_weights_is_attention():
    x = np.random.default_rng(0).normal(size=(4, 6))
    eye = np.eye(6)
    out, weights = kernels.multi_head_attention(x, eye, eye, eye, eye, heads=1)
    ref_out, ref_weights = kernels.attention(x, x, x)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12)
    np.testing.assert_allclose(weights[0], ref_weights, rtol=1e-12)


@pytest.mark.parametrize(
    ("heads", "w_shape", "mask", "message"),
    [
        (3, (8, 8), None, "dividing d_model = 8"),
        (0, (8, 8), None, "dividing d_model = 8"),
        (2, (8, 4), None, "w_q must be d_model × d_model"),
        (2, (8, 8), np.zeros((4, 5)), "mask must be tokens × tokens"),
    ],
)
def test_multi_head_attention_rejects_bad_shapes(heads, w_shape, mask, message):
    x = np.ones((5, 8))
    w = np.ones(w_shape)
    with pytest.raises(ValueError, match=message):
        kernels.multi_head_attention(x, w, np.eye(8), np.eye(8), np.eye(8), heads=heads, mask=mask)


def test_adamw_without_weight_decay_is_adam():
    theta, m, v = kernels.adamw(lambda t: 2.0 * t, 3.0, 200, lr=0.1, weight_decay=0.0)
    ref = kernels.adam(lambda t: 2.0 * t, 3.0, 200, lr=0.1)
    for got, want in zip((theta, m, v), ref, strict=True):
        assert got.tolist() == want.tolist()


def test_adamw_decay_is_decoupled_from_the_gradient():
    # With a zero gradient, Adam does not move and AdamW only shrinks: θ_t = θ₀ (1 − η λ)^t.
    theta, m, v = kernels.adamw(lambda t: 0.0 * t, 3.0, 10, lr=0.1, weight_decay=0.5)
    np.testing.assert_allclose(theta, 3.0 * 0.95 ** np.arange(11), rtol=1e-12)
    assert not m.any() and not v.any()


def test_adamw_first_step_by_hand_and_on_arrays():
    lr, wd, theta0 = 0.1, 0.01, np.array([3.0, -2.0])
    theta, _m, _v = kernels.adamw(lambda t: 2.0 * t, theta0, 1, lr=lr, weight_decay=wd)
    g = 2.0 * theta0  # the gradient at the step's starting θ
    expected = theta0 * (1 - lr * wd) - lr * g / (np.abs(g) + 1e-8)
    np.testing.assert_allclose(theta[1], expected, rtol=1e-12)
    scalar, _m, _v = kernels.adamw(lambda t: 2.0 * t, 3.0, 1, lr=lr, weight_decay=wd)
    assert math.isclose(scalar[1], expected[0], rel_tol=1e-12)


@pytest.mark.parametrize("wd", [-0.1, float("nan"), float("inf")])
def test_adamw_rejects_bad_weight_decay(wd):
    with pytest.raises(ValueError, match="weight_decay"):
        kernels.adamw(lambda t: 2.0 * t, 3.0, 5, weight_decay=wd)


@settings(max_examples=60, deadline=None)
@given(
    theta0=st.floats(-50, 50),
    steps=st.integers(0, 300),
    lr=st.floats(1e-4, 1.5),
    beta1=st.floats(0.0, 0.99),
    beta2=st.floats(0.5, 0.9999),
    quartic=st.booleans(),
)
def test_optimiser_paths_equal_the_three_separate_runs(theta0, steps, lr, beta1, beta2, quartic):
    def grad(th):
        return 4.0 * th**3 if quartic else 2.0 * th

    args = {"lr": lr, "beta1": beta1, "beta2": beta2}
    try:
        expected_bc = kernels.adam(grad, theta0, steps, **args)[0]
        expected_raw = kernels.adam(grad, theta0, steps, bias_correction=False, **args)[0]
    except (ValueError, OverflowError):
        return  # a quartic that blows up is refused by both; the message is tested elsewhere
    bc, raw, plain = kernels.optimiser_paths(grad, theta0, steps, **args)
    assert np.array_equal(bc, expected_bc)
    assert np.array_equal(raw, expected_raw)
    assert np.array_equal(plain, kernels.sgd(grad, theta0, steps, lr))


def test_optimiser_paths_seed_vector_and_refusals():
    bc, raw, plain = kernels.optimiser_paths(lambda th: 2 * th, 3.0, 200, lr=0.1)
    assert round(float(bc[-1]), 4) == -0.0001  # the seed chapter's printed value
    assert len(bc) == len(raw) == len(plain) == 201
    with pytest.raises(ValueError, match="theta0 must be a single number"):
        kernels.optimiser_paths(lambda th: 2 * th, [1.0, 2.0], 10)
    with pytest.raises(ValueError, match="beta2 must be in"):
        kernels.optimiser_paths(lambda th: 2 * th, 1.0, 10, beta2=1.0)
