"""The symbol glossary: what each piece of notation in the lessons means.

``GLOSSARY`` is the source the demo loader upserts into ``courses.Symbol`` (keyed by slug); the
notation explorer recognises an equation's tokens by the ``tokens`` of the Symbol rows. A token is
written the way it appears in a formula, LaTeX (``"\\beta_1"``, ``"^\\top"``) or Unicode
(``"β₁"``, ``"ᵀ"``); the explorer tokenises it with the same rules as the pasted equation, so
``"d_k"`` and ``"d_{k}"`` are the same token and longer tokens win over shorter ones.
"""

from __future__ import annotations


def _entry(
    slug: str, name: str, glyph: str, latex: str, tokens: list[str], explanation: str
) -> dict:
    return {
        "slug": slug,
        "name": name,
        "glyph": glyph,
        "latex": latex,
        "tokens": tokens,
        "explanation": explanation,
    }


GLOSSARY: list[dict] = [
    # --- functions and named operators ------------------------------------------------------
    _entry(
        "softmax",
        "softmax",
        "softmax",
        r"\operatorname{softmax}",
        [r"\operatorname{softmax}", r"\text{softmax}", r"\mathrm{softmax}", "softmax"],
        "Turns a vector of scores into probabilities: exponentiate each entry, then divide by "
        "the total so the results are positive and add up to 1.",
    ),
    _entry(
        "attention",
        "Attention",
        "Attention",
        r"\operatorname{Attention}",
        [r"\operatorname{Attention}", r"\text{Attention}", "Attention"],
        "The function of a transformer layer that lets each token read from the others: "
        "queries are compared with keys, and the resulting weights average the values.",
    ),
    _entry(
        "layer-norm",
        "LN (layer normalization)",
        "LN",
        r"\operatorname{LN}",
        [r"\operatorname{LN}", r"\mathrm{LN}", "LN", r"\operatorname{LayerNorm}", "LayerNorm"],
        "Re-centres and re-scales the features of one token to mean 0 and variance 1, then "
        "applies a learned scale $\\gamma$ and shift $\\beta$.",
    ),
    _entry(
        "rms-norm",
        "RMSNorm",
        "RMSNorm",
        r"\operatorname{RMSNorm}",
        [r"\operatorname{RMSNorm}", "RMSNorm", r"\operatorname{RMS}", "RMS"],
        "Layer norm without the centring: divide by the root of the mean square of the "
        "features and multiply by a learned gain. Cheaper, and in practice just as good.",
    ),
    _entry(
        "rope",
        "RoPE (rotary position embedding)",
        "RoPE",
        r"\operatorname{RoPE}",
        [r"\operatorname{RoPE}", "RoPE"],
        "Rotates pairs of query and key features by an angle proportional to the token's "
        "position, so that their dot product only sees how far apart two tokens are.",
    ),
    _entry(
        "argmax",
        "argmax",
        "argmax",
        r"\arg\max",
        [r"\arg\max", r"\operatorname{argmax}", r"\operatorname*{argmax}", "argmax"],
        "The input at which a function is largest (not the largest value itself); the "
        "subscript says which variable is searched over.",
    ),
    _entry(
        "argmin",
        "argmin",
        "argmin",
        r"\arg\min",
        [r"\arg\min", r"\operatorname{argmin}", r"\operatorname*{argmin}", "argmin"],
        "The input at which a function is smallest. Training a model is an argmin over its "
        "parameters of the loss.",
    ),
    _entry(
        "max",
        "max",
        "max",
        r"\max",
        [r"\max", "max"],
        "The largest value of what follows, over whatever the subscript ranges over.",
    ),
    _entry(
        "min",
        "min",
        "min",
        r"\min",
        [r"\min", "min"],
        "The smallest value of what follows, over whatever the subscript ranges over.",
    ),
    _entry(
        "exp",
        "exp (exponential)",
        "exp",
        r"\exp",
        [r"\exp", "exp"],
        "$\\exp(x) = e^x$: always positive and growing fast, which is why softmax uses it to "
        "turn scores into weights.",
    ),
    _entry(
        "euler-e",
        "e (Euler's number)",
        "e",
        "e",
        ["e"],
        "The constant 2.718…; $e^{x}$ is the exponential function.",
    ),
    _entry(
        "log",
        "log (natural logarithm)",
        "log",
        r"\log",
        [r"\log", r"\ln", "log", "ln"],
        "The inverse of the exponential; in ML papers it almost always means the natural "
        "log. It turns products of probabilities into sums.",
    ),
    _entry(
        "cos",
        "cos (cosine)",
        "cos",
        r"\cos",
        [r"\cos", "cos"],
        "The horizontal coordinate of a point turned by an angle on the unit circle; RoPE "
        "uses it with sine to rotate feature pairs.",
    ),
    _entry(
        "sin",
        "sin (sine)",
        "sin",
        r"\sin",
        [r"\sin", "sin"],
        "The vertical coordinate of a point turned by an angle on the unit circle; paired "
        "with cosine it describes a rotation.",
    ),
    _entry(
        "variance-op",
        "Var (variance)",
        "Var",
        r"\operatorname{Var}",
        [r"\operatorname{Var}", r"\text{Var}", r"\mathrm{Var}", "Var"],
        "The expected squared distance of a random quantity from its own mean: how much it "
        "spreads.",
    ),
    _entry(
        "expectation",
        "expectation / mean",
        "𝔼",
        r"\mathbb{E}",
        [r"\mathbb{E}", "𝔼", r"\operatorname{E}", "E", r"\operatorname{mean}", "mean"],
        "The average of a quantity, weighted by how likely each value is; over a finite list "
        "it is the plain mean.",
    ),
    _entry(
        "big-o",
        "O (order of growth)",
        "O",
        r"\mathcal{O}",
        [r"\mathcal{O}", "O"],
        "$O(T^2)$ says the cost grows at most like $T^2$ up to a constant factor: doubling "
        "$T$ roughly quadruples it.",
    ),
    # --- operators --------------------------------------------------------------------------
    _entry(
        "transpose",
        "transpose",
        "ᵀ",
        r"^\top",
        [r"^\top", r"^{\top}", r"\top", "^T", "^{T}", "ᵀ", r"^\intercal", r"^{\intercal}"],
        "Swaps rows and columns: an $n \\times m$ matrix becomes $m \\times n$. In $QK^\\top$ it "
        "lines keys up so every query meets every key.",
    ),
    _entry(
        "inverse",
        "matrix inverse",
        "⁻¹",
        "^{-1}",
        ["^{-1}", "⁻¹"],
        "$A^{-1}$ undoes $A$: $A^{-1}A = I$. It exists only for square matrices that do not "
        "squash any direction to zero.",
    ),
    _entry(
        "square-root",
        "square root",
        "√",
        r"\sqrt{}",
        [r"\sqrt", "√"],
        "The number that squared gives what is under the sign. Dividing by $\\sqrt{d_k}$ "
        "undoes the growth of a sum of $d_k$ random products.",
    ),
    _entry(
        "fraction",
        "fraction (division)",
        "⁄",
        r"\frac{a}{b}",
        [r"\frac", r"\dfrac", r"\tfrac", "/", "÷"],
        "The top divided by the bottom. A long fraction bar groups everything above it and "
        "everything below it.",
    ),
    _entry(
        "superscript",
        "superscript (power)",
        "x²",
        "x^{2}",
        ["^"],
        "Raised text after a symbol: usually a power ($g_t^2$ is $g_t$ squared), sometimes a "
        "label such as a layer number or $\\top$.",
    ),
    _entry(
        "subscript",
        "subscript (index)",
        "xᵢ",
        "x_{i}",
        ["_"],
        "Lowered text after a symbol: which element, time step or variant is meant ($x_i$ is "
        "entry $i$ of $x$; $m_t$ is $m$ at step $t$).",
    ),
    _entry(
        "hadamard",
        "Hadamard (element-wise) product",
        "⊙",
        r"\odot",
        [r"\odot", "⊙"],
        "Multiply two arrays of the same shape entry by entry; no sums, unlike a matrix product.",
    ),
    _entry(
        "sum",
        "sum",
        "∑",
        r"\sum",
        [r"\sum", "∑", "Σ"],
        "Add up the expression for every value of the index written under (and over) the sign.",
    ),
    _entry(
        "hat",
        "hat (estimate)",
        "x̂",
        r"\hat{x}",
        [r"\hat", r"\widehat", "\u0302"],
        "A hat marks an estimate or a corrected version of the plain symbol: $\\hat{m}_t$ is "
        "$m_t$ after bias correction, $\\hat{f}$ a fitted model of $f$.",
    ),
    _entry(
        "bold",
        "bold (vector or matrix)",
        "𝐱",
        r"\mathbf{x}",
        [r"\mathbf", r"\boldsymbol", r"\bm", r"\vec"],
        "Bold type says the symbol holds many numbers: a vector (lower case) or a matrix "
        "(upper case), rather than a single scalar.",
    ),
    _entry(
        "norm",
        "norm ‖·‖",
        "‖·‖",
        r"\lVert x \rVert",
        [r"\|", "‖", r"\lVert", r"\rVert", r"\Vert"],
        "The length of a vector, by default the square root of the sum of its squared entries.",
    ),
    _entry(
        "inner-product",
        "dot (inner) product ⟨·,·⟩",
        "⟨·,·⟩",
        r"\langle q, k \rangle",
        [r"\langle", "⟨", r"\rangle", "⟩"],
        "Multiply two vectors entry by entry and add the results: large when they point the "
        "same way, zero when perpendicular.",
    ),
    _entry(
        "partial",
        "partial derivative ∂",
        "∂",
        r"\partial",
        [r"\partial", "∂"],
        "$\\partial y / \\partial x$ is how fast $y$ changes when only $x$ moves and every "
        "other input stays fixed.",
    ),
    _entry(
        "nabla",
        "gradient ∇",
        "∇",
        r"\nabla",
        [r"\nabla", "∇"],
        "The vector of all partial derivatives of a loss with respect to the parameters; it "
        "points uphill, so optimisers step against it.",
    ),
    _entry(
        "element-of",
        "element of ∈",
        "∈",
        r"\in",
        [r"\in", "∈"],
        "$x \\in S$ says $x$ belongs to the set $S$; $Q \\in \\mathbb{R}^{T \\times d_k}$ "
        "states a matrix's shape.",
    ),
    _entry(
        "reals",
        "real numbers ℝ",
        "ℝ",
        r"\mathbb{R}",
        [r"\mathbb{R}", "ℝ", r"\R"],
        "The set of ordinary (real) numbers; $\\mathbb{R}^{n \\times m}$ is the set of "
        "$n \\times m$ matrices of them.",
    ),
    _entry(
        "proportional",
        "proportional to ∝",
        "∝",
        r"\propto",
        [r"\propto", "∝"],
        "Equal up to a constant factor that the writer does not bother to spell out (often "
        "a normalising constant).",
    ),
    _entry(
        "approx",
        "approximately equal ≈",
        "≈",
        r"\approx",
        [r"\approx", "≈"],
        "Close to, but not exactly, equal; the paper is ignoring a small term or rounding.",
    ),
    _entry(
        "implies",
        "implies ⇒",
        "⇒",
        r"\Rightarrow",
        [r"\Rightarrow", r"\implies", "⇒"],
        "What stands on the left guarantees what stands on the right.",
    ),
    _entry(
        "given",
        "given ∣",
        "∣",
        r"\mid",
        [r"\mid"],
        "Inside a probability, what follows the bar is known: $p(y \\mid x)$ is the "
        "probability of $y$ once $x$ is fixed.",
    ),
    # --- Greek letters and named quantities -------------------------------------------------
    _entry(
        "epsilon",
        "epsilon",
        "ε",
        r"\epsilon",
        [r"\epsilon", r"\varepsilon", "ε", "ϵ"],
        "A tiny constant (like $10^{-8}$ or $10^{-5}$) added to a denominator so it can never "
        "be zero; it should not change the answer otherwise.",
    ),
    _entry(
        "eta",
        "eta (learning rate)",
        "η",
        r"\eta",
        [r"\eta", "η"],
        "The learning rate: how far one optimiser step moves the parameters. Too large "
        "diverges, too small crawls.",
    ),
    _entry(
        "beta",
        "beta",
        "β",
        r"\beta",
        [r"\beta", "β"],
        "In a normalisation layer, the learned shift added after scaling; with a subscript in "
        "Adam, a decay rate of a running average.",
    ),
    _entry(
        "beta-1",
        "β₁ (momentum decay)",
        "β₁",
        r"\beta_1",
        [r"\beta_1", "β_1", "β₁"],
        "How much of the previous running average of gradients Adam keeps each step, "
        "typically 0.9 (about the last 10 steps).",
    ),
    _entry(
        "beta-2",
        "β₂ (second-moment decay)",
        "β₂",
        r"\beta_2",
        [r"\beta_2", "β_2", "β₂"],
        "How much of the previous average of squared gradients Adam keeps each step, "
        "typically 0.999 (about the last 1000 steps).",
    ),
    _entry(
        "gamma",
        "gamma (gain)",
        "γ",
        r"\gamma",
        [r"\gamma", "γ"],
        "A learned per-feature scale applied after normalising, so the layer can undo the "
        "normalisation where that helps.",
    ),
    _entry(
        "mu",
        "mu (mean)",
        "μ",
        r"\mu",
        [r"\mu", "μ"],
        "The mean. In layer norm it is the average of one token's features.",
    ),
    _entry(
        "sigma",
        "sigma (std) / sigma² (variance)",
        "σ",
        r"\sigma",
        [r"\sigma", "σ", r"\sigma^2", "σ²"],
        "$\\sigma$ is a standard deviation and $\\sigma^2$ a variance: the average squared "
        "distance from the mean. Also the name of the logistic function.",
    ),
    _entry(
        "capital-sigma",
        "Σ (matrix of singular values)",
        "Σ",
        r"\Sigma",
        [r"\Sigma"],
        "As a matrix rather than a sum sign: the diagonal matrix of singular values in "
        "$U \\Sigma V^\\top$, or a covariance matrix.",
    ),
    _entry(
        "theta",
        "theta (parameters)",
        "θ",
        r"\theta",
        [r"\theta", "θ", r"\theta_t", r"\theta_{t-1}"],
        "The model's parameters, everything training adjusts; $\\theta_t$ is their value "
        "after step $t$.",
    ),
    _entry(
        "rope-angle",
        "θᵢ (RoPE rotation frequency)",
        "θᵢ",
        r"\theta_i",
        [r"\theta_i", "θ_i", "θᵢ"],
        "In RoPE, the angle per position for feature pair $i$: "
        "$\\theta_i = \\text{base}^{-2i/d}$, fast for the first pairs and slow for the last.",
    ),
    _entry(
        "tau",
        "tau (temperature)",
        "τ",
        r"\tau",
        [r"\tau", "τ"],
        "The temperature dividing logits before softmax: small τ sharpens towards the argmax, "
        "large τ flattens towards uniform.",
    ),
    _entry(
        "lambda",
        "lambda",
        "λ",
        r"\lambda",
        [r"\lambda", "λ"],
        "An eigenvalue ($A v = \\lambda v$), or the strength of a regularisation term such "
        "as weight decay.",
    ),
    _entry(
        "capital-lambda",
        "Λ (diagonal matrix of eigenvalues)",
        "Λ",
        r"\Lambda",
        [r"\Lambda", "Λ"],
        "A diagonal matrix holding the eigenvalues; powers of it are just powers of the "
        "diagonal entries.",
    ),
    _entry(
        "rho",
        "rho (spectral radius)",
        "ρ",
        r"\rho",
        [r"\rho", "ρ"],
        "$\\rho(A)$ is the largest eigenvalue magnitude of $A$; above 1, repeated "
        "multiplication by $A$ blows up.",
    ),
    # --- shapes and indices -----------------------------------------------------------------
    _entry(
        "d-k",
        "d_k (key dimension)",
        "dₖ",
        "d_k",
        ["d_k", "dₖ"],
        "How many numbers each query and key vector has, per head. Scores are divided by "
        "$\\sqrt{d_k}$ to keep their spread independent of it.",
    ),
    _entry(
        "d-v",
        "d_v (value dimension)",
        "dᵥ",
        "d_v",
        ["d_v", "dᵥ"],
        "How many numbers each value vector has; it sets the width of the attention output.",
    ),
    _entry(
        "d",
        "d (feature dimension)",
        "d",
        "d",
        ["d", r"d_{\text{model}}", r"d_{\mathrm{model}}", r"d_{\text{ff}}"],
        "The number of features per token (the model width); $\\frac{1}{d}\\sum_i$ averages "
        "over them.",
    ),
    _entry(
        "index",
        "i, j (indices)",
        "i",
        "i",
        ["i", "j"],
        "Positions inside a vector or a sum: $x_i$ is entry $i$, and $\\sum_i$ runs over every "
        "$i$.",
    ),
    _entry(
        "time-step",
        "t (time step)",
        "t",
        "t",
        ["t", "t-1", "t+1"],
        "The step counter of an iterative process: $t-1$ is the step before, and the first "
        "step is $t = 1$.",
    ),
    _entry(
        "count-n",
        "N (number of examples)",
        "N",
        "N",
        ["N"],
        "How many examples are summed or averaged over, e.g. the size of a data set or batch.",
    ),
    _entry(
        "seq-len",
        "T (sequence length)",
        "T",
        "T",
        ["T"],
        "The number of tokens in a sequence (not $^\\top$, the transpose). Inside a softmax, "
        "$T$ is often a temperature instead.",
    ),
    _entry(
        "positions",
        "m, n (positions)",
        "m",
        "m",
        ["m", "n"],
        "Two token positions, as in RoPE's $\\langle q_m, k_n \\rangle$; only their offset "
        "$n - m$ should matter.",
    ),
    # --- variables ---------------------------------------------------------------------------
    _entry(
        "logits",
        "z (logits)",
        "z",
        "z",
        ["z", "z_i", "z_j"],
        "Raw scores before softmax, one per class or token; only their differences matter.",
    ),
    _entry(
        "rope-base",
        "b (RoPE base)",
        "b",
        "b",
        ["b", r"\text{base}", "base"],
        "The base of RoPE's frequencies (10,000 by default); a larger base makes the slowest "
        "pairs turn even more slowly, which helps long contexts.",
    ),
    _entry(
        "rotation-matrix",
        "R_m (rotation matrix)",
        "Rₘ",
        "R_m",
        ["R", "R_m", "R_n", "R_{n-m}"],
        "The block-diagonal matrix that turns each feature pair by its angle times position "
        "$m$; rotations compose, so $R_m^\\top R_n = R_{n-m}$.",
    ),
    _entry(
        "query",
        "Q (queries)",
        "Q",
        "Q",
        ["Q"],
        "In attention, one query row per token: what that token is looking for. (In linear "
        "algebra, $Q$ often names a matrix of eigenvectors instead.)",
    ),
    _entry(
        "key",
        "K (keys)",
        "K",
        "K",
        ["K"],
        "In attention, one key row per token: what that token offers to be matched against.",
    ),
    _entry(
        "value",
        "V (values)",
        "V",
        "V",
        ["V"],
        "In attention, one value row per token: what that token hands over when it is "
        "attended to. (In an SVD, $V$ holds the right singular vectors.)",
    ),
    _entry(
        "qk-vectors",
        "q, k (one query, one key)",
        "q",
        "q",
        ["q", "k", "q_m", "k_n"],
        "A single query or key vector: one row of $Q$ or $K$.",
    ),
    _entry(
        "m-t",
        "m_t (first moment)",
        "mₜ",
        "m_t",
        ["m_t", "m_{t-1}", "mₜ"],
        "Adam's running average of gradients (momentum) at step $t$.",
    ),
    _entry(
        "v-t",
        "v_t (second moment)",
        "vₜ",
        "v_t",
        ["v_t", "v_{t-1}", "vₜ"],
        "Adam's running average of squared gradients at step $t$; its square root sets the "
        "per-parameter step scale.",
    ),
    _entry(
        "g-t",
        "g_t (gradient)",
        "gₜ",
        "g_t",
        ["g_t", "gₜ"],
        "The gradient of the loss at step $t$, the raw signal Adam smooths.",
    ),
    _entry(
        "x",
        "x (input vector)",
        "x",
        "x",
        ["x", "x_i", "x_j", "x_t", "x_{t+1}", "xᵢ"],
        "The input, usually one token's feature vector; $x_i$ is its $i$-th entry.",
    ),
    _entry(
        "y",
        "y (target or output)",
        "y",
        "y",
        ["y", "y_i"],
        "An output or a label the model should predict; $y_i$ belongs to example $i$.",
    ),
    _entry(
        "capital-x",
        "X (random variable)",
        "X",
        "X",
        ["X"],
        "A random quantity, or a data matrix with one example per row.",
    ),
    _entry(
        "function-f",
        "f, g (functions)",
        "f",
        "f",
        ["f", "g"],
        "Names for functions; $f(g(x))$ applies $g$ first, then $f$.",
    ),
    _entry(
        "probability",
        "p_θ (model probability)",
        "p",
        r"p_\theta",
        [r"p_\theta", "p_θ", "p"],
        "A probability or density; $p_\\theta$ is the one the model with parameters "
        "$\\theta$ assigns.",
    ),
    _entry(
        "matrix-a",
        "A (a matrix)",
        "A",
        "A",
        ["A", "W"],
        "A generic matrix (or $W$, a weight matrix) acting on vectors by matrix multiplication.",
    ),
    _entry(
        "matrix-u",
        "U (left singular vectors)",
        "U",
        "U",
        ["U"],
        "In an SVD, the orthogonal matrix whose columns are the output directions.",
    ),
]


# How the seven questions treat each symbol (Symbol.kind; "quantity" when not listed) and the
# prompt they give for "what happens at the extremes" (Symbol.extremes).
_KINDS = {
    "learned": ["gamma", "beta", "theta", "matrix-a", "probability"],
    "constant": [
        "epsilon", "eta", "beta-1", "beta-2", "tau", "d-k", "d-v", "d", "count-n", "rope-angle",
    ],
    "operation": [
        "softmax", "attention", "layer-norm", "rms-norm", "rope", "argmax", "argmin", "max", "min",
        "exp", "log", "cos", "sin", "variance-op", "expectation", "transpose", "inverse",
        "square-root", "fraction", "hadamard", "sum", "norm", "inner-product", "partial", "nabla",
        "superscript", "hat", "big-o",
    ],
    "notation": ["subscript", "bold", "index", "time-step"],
}  # fmt: skip
_EXTREMES = {
    "epsilon": "ε → 0 (and a zero variance): ?  ε large: ?",
    "eta": "η → 0: ?  η large: ?",
    "beta-1": "β₁ = 0: ?  β₁ → 1: ?",
    "beta-2": "β₂ = 0: ?  β₂ → 1: ?",
    "tau": "τ → 0: ?  τ → ∞: ?",
    "d-k": "d_k → ∞ (with and without the divisor): ?",
    "d": "d = 1: ?  d large: ?",
    "time-step": "t = 1: ?  t → ∞: ?",
    "count-n": "N = 1: ?  N → ∞: ?",
}
for _e in GLOSSARY:
    _e["kind"] = next((k for k, slugs in _KINDS.items() if _e["slug"] in slugs), "quantity")
    _e["extremes"] = _EXTREMES.get(_e["slug"], "")
