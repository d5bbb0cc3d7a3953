"""Hand-written answers for the `information_theory` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails). Points per task: a visible cell worth 1 and a hidden
cell worth 2; two_part_codelength has a third cell for the ValueError cases worth 1 (4 in all).
The tasks beyond the chapter, js_divergence and entropy_rate, have a visible cell worth 2, an
edge-case cell worth 2 and hidden tests worth 6 (10 each).
SHORTCUTS: the answer of the nearest printed example, with its score (below full marks), as
{label: (task, answer, score)}.
HONEST: correct answers written differently from the reference; each must get full marks.
Huffman answers are judged by expected length and Kraft's inequality, so honest variants may
break ties differently from the reference.
"""

MODULE = "information"

#: Shortcuts through a call the task forbids (metadata.mlcourse.forbidden of the notebook), as
#: {task: [(answer, the call the feedback must name)]}: each earns its task nothing, by name
#: (aliases, getattr, importlib) or, when the name is built at run time, by the sandbox's watch.
FORBIDDEN_SHORTCUTS = {
    "cross_entropy": [
        ("import numpy as np\n"
         "from scipy import stats\n"
         "def cross_entropy(p, q, base=2):\n"
         "    return stats.entropy(p, base=base) + stats.entropy(p, q, base=base)\n",
         "scipy.stats.entropy"),
        ("import numpy as np\n"
         "from scipy import special\n"
         "def cross_entropy(p, q, base=2):\n"
         "    p = np.asarray(p, float); q = np.asarray(q, float)\n"
         "    return float(-special.xlog1py(p, q - 1).sum() / np.log(base))\n",
         "scipy.special.xlog1py"),
    ],
    "entropy_rate": [
        # The entropies of the rows as one-trial multinomials.
        ("import numpy as np\n"
         "from scipy import stats\n"
         "def entropy_rate(P, base=2):\n"
         "    P = np.asarray(P, float); K = len(P)\n"
         "    A = P.T - np.eye(K); A[-1] = 1.0\n"
         "    pi = np.linalg.solve(A, np.r_[np.zeros(K - 1), 1.0])\n"
         "    return float(pi @ stats.multinomial(1, P).entropy() / np.log(base))\n",
         "scipy.stats.multinomial"),
    ],
    "kl_divergence": [
        # The name is built at run time: only the sandbox's watch sees the call.
        ("import numpy as np\n"
         "import sys\n"
         "def kl_divergence(p, q, base=2):\n"
         "    import scipy.special\n"
         "    f = vars(sys.modules['scipy.special'])['_'.join(['rel', 'entr'])[::1]]\n"
         "    g = getattr(scipy.special, '%s_%s' % ('rel', 'entr'))\n"
         "    return float(np.sum(g(p, q)) / np.log(base))\n",
         "scipy.special.rel_entr"),
        # xlog1py(p, q - 1) = p log q, 0 where p = 0: xlogy by another name; built at run time.
        ("import numpy as np\n"
         "import scipy.special\n"
         "def kl_divergence(p, q, base=2):\n"
         "    p = np.asarray(p, float); q = np.asarray(q, float)\n"
         "    f = getattr(scipy.special, ''.join(reversed('yp1golx')))\n"
         "    return float((f(p, p - 1) - f(p, q - 1)).sum() / np.log(base))\n",
         "scipy.special.xlog1py"),
    ],
    "entropy": [
        ("import numpy as np\n"
         "from scipy.special import xlog1py\n"
         "def entropy(p, base=2):\n"
         "    p = np.asarray(p, float)\n"
         "    return float(-xlog1py(p, p - 1).sum() / np.log(base))\n",
         "scipy.special.xlog1py"),
        # The entropy of a one-trial multinomial is that of p.
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def entropy(p, base=2):\n"
         "    dist = getattr(scipy.stats, ''.join(reversed('laimonitlum')))\n"
         "    return float(dist.entropy(1, np.asarray(p, float)) / np.log(base))\n",
         "scipy.stats.multinomial"),
    ],
}

WRONG = {
    "entropy": [
        # Natural logarithm whatever the base: nats where bits are asked for.
        ("import numpy as np\n"
         "def entropy(p, base=2):\n"
         "    p = np.asarray(p, float)\n"
         "    p = p[p > 0]\n"
         "    return float(-np.sum(p * np.log(p)))\n", 0),
        # No 0 log 0 = 0: a zero probability gives nan.
        ("import numpy as np\n"
         "def entropy(p, base=2):\n"
         "    p = np.asarray(p, float)\n"
         "    with np.errstate(all='ignore'):\n"
         "        return float(-np.sum(p * np.log(p)) / np.log(base))\n", 0),
        # base ignored (always bits): right on the visible examples, wrong in nats.
        ("import numpy as np\n"
         "def entropy(p, base=2):\n"
         "    p = np.asarray(p, float)\n"
         "    p = p[p > 0]\n"
         "    return float(-np.sum(p * np.log2(p)))\n", 1),
        # "Normalised" entropy: divided by log K.
        ("import numpy as np\n"
         "def entropy(p, base=2):\n"
         "    p = np.asarray(p, float)\n"
         "    nz = p[p > 0]\n"
         "    h = -np.sum(nz * np.log(nz)) / np.log(base)\n"
         "    return float(h / (np.log(len(p)) / np.log(base))) if len(p) > 1 else 0.0\n", 0),
    ],
    "cross_entropy": [
        # Arguments swapped: H(q, p).
        ("import numpy as np\n"
         "def cross_entropy(p, q, base=2):\n"
         "    p, q = np.asarray(q, float), np.asarray(p, float)\n"
         "    used = p > 0\n"
         "    if np.any(q[used] == 0):\n"
         "        return float('inf')\n"
         "    return float(-np.sum(p[used] * np.log(q[used])) / np.log(base))\n", 0),
        # Returns the KL divergence H(p, q) - H(p) instead.
        ("import numpy as np\n"
         "def cross_entropy(p, q, base=2):\n"
         "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
         "    used = p > 0\n"
         "    if np.any(q[used] == 0):\n"
         "        return float('inf')\n"
         "    return float(np.sum(p[used] * np.log(p[used] / q[used])) / np.log(base))\n", 0),
        # 0 * log 0 computed literally: nan where p = q = 0.
        ("import numpy as np\n"
         "def cross_entropy(p, q, base=2):\n"
         "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
         "    with np.errstate(all='ignore'):\n"
         "        return float(-np.sum(p * np.log(q)) / np.log(base))\n", 0),
        # base ignored.
        ("import numpy as np\n"
         "def cross_entropy(p, q, base=2):\n"
         "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
         "    used = p > 0\n"
         "    if np.any(q[used] == 0):\n"
         "        return float('inf')\n"
         "    return float(-np.sum(p[used] * np.log2(q[used])))\n", 1),
        # q clipped to 1e-12: finite where the answer is inf.
        ("import numpy as np\n"
         "def cross_entropy(p, q, base=2):\n"
         "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
         "    used = p > 0\n"
         "    return float(-np.sum(p[used] * np.log(np.maximum(q[used], 1e-12))) / np.log(base))\n",
         0),
    ],
    "kl_divergence": [
        # Arguments swapped: KL(q || p).
        ("import numpy as np\n"
         "def kl_divergence(p, q, base=2):\n"
         "    p, q = np.asarray(q, float), np.asarray(p, float)\n"
         "    used = p > 0\n"
         "    if np.any(q[used] == 0):\n"
         "        return float('inf')\n"
         "    return float(np.sum(p[used] * np.log(p[used] / q[used])) / np.log(base))\n", 0),
        # 0 log 0 computed literally: nan where p = 0.
        ("import numpy as np\n"
         "def kl_divergence(p, q, base=2):\n"
         "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
         "    with np.errstate(all='ignore'):\n"
         "        return float(np.sum(p * np.log(p / q)) / np.log(base))\n", 0),
        # base ignored.
        ("import numpy as np\n"
         "def kl_divergence(p, q, base=2):\n"
         "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
         "    used = p > 0\n"
         "    if np.any(q[used] == 0):\n"
         "        return float('inf')\n"
         "    return float(np.sum(p[used] * np.log2(p[used] / q[used])))\n", 1),
        # Symmetrised: the average of both directions.
        ("import numpy as np\n"
         "def kl_divergence(p, q, base=2):\n"
         "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
         "    def one(a, b):\n"
         "        used = a > 0\n"
         "        if np.any(b[used] == 0):\n"
         "            return np.inf\n"
         "        return np.sum(a[used] * np.log(a[used] / b[used]))\n"
         "    return float((one(p, q) + one(q, p)) / 2 / np.log(base))\n", 0),
    ],
    "huffman_code_lengths": [
        # Shannon code lengths ceil(-log2 p): within one bit, but not optimal.
        ("import numpy as np\n"
         "def huffman_code_lengths(p):\n"
         "    p = np.asarray(p, float)\n"
         "    with np.errstate(divide='ignore'):\n"
         "        return np.ceil(-np.log2(p))\n", 0),
        # A merged subtree gets the larger probability of its two parts, not their sum: right
        # on the visible examples, not optimal on random distributions.
        ("import heapq\n"
         "import numpy as np\n"
         "def huffman_code_lengths(p):\n"
         "    L = np.zeros(len(p), dtype=int)\n"
         "    heap = [(float(w), k, [k]) for k, w in enumerate(p)]\n"
         "    heapq.heapify(heap)\n"
         "    n = len(p)\n"
         "    while len(heap) > 1:\n"
         "        w1, _, a = heapq.heappop(heap)\n"
         "        w2, _, b = heapq.heappop(heap)\n"
         "        L[a + b] += 1\n"
         "        heapq.heappush(heap, (max(w1, w2), n, a + b))\n"
         "        n += 1\n"
         "    return L\n", 1),
        # A single symbol given one bit.
        ("import heapq\n"
         "import numpy as np\n"
         "def huffman_code_lengths(p):\n"
         "    if len(p) == 1:\n"
         "        return np.array([1])\n"
         "    L = np.zeros(len(p), dtype=int)\n"
         "    heap = [(float(w), k, [k]) for k, w in enumerate(p)]\n"
         "    heapq.heapify(heap)\n"
         "    n = len(p)\n"
         "    while len(heap) > 1:\n"
         "        w1, _, a = heapq.heappop(heap)\n"
         "        w2, _, b = heapq.heappop(heap)\n"
         "        L[a + b] += 1\n"
         "        heapq.heappush(heap, (w1 + w2, n, a + b))\n"
         "        n += 1\n"
         "    return L\n", 0),
        # Zero-probability symbols left out of the tree (length 0): Kraft's inequality fails.
        ("import heapq\n"
         "import numpy as np\n"
         "def huffman_code_lengths(p):\n"
         "    L = np.zeros(len(p), dtype=int)\n"
         "    heap = [(float(w), k, [k]) for k, w in enumerate(p) if w > 0]\n"
         "    heapq.heapify(heap)\n"
         "    n = len(p)\n"
         "    while len(heap) > 1:\n"
         "        w1, _, a = heapq.heappop(heap)\n"
         "        w2, _, b = heapq.heappop(heap)\n"
         "        L[a + b] += 1\n"
         "        heapq.heappush(heap, (w1 + w2, n, a + b))\n"
         "        n += 1\n"
         "    return L\n", 0),
        # The two most probable subtrees merged first (a max-heap by mistake).
        ("import heapq\n"
         "import numpy as np\n"
         "def huffman_code_lengths(p):\n"
         "    L = np.zeros(len(p), dtype=int)\n"
         "    heap = [(-float(w), k, [k]) for k, w in enumerate(p)]\n"
         "    heapq.heapify(heap)\n"
         "    n = len(p)\n"
         "    while len(heap) > 1:\n"
         "        w1, _, a = heapq.heappop(heap)\n"
         "        w2, _, b = heapq.heappop(heap)\n"
         "        L[a + b] += 1\n"
         "        heapq.heappush(heap, (w1 + w2, n, a + b))\n"
         "        n += 1\n"
         "    return L\n", 0),
    ],
    "is_prefix_free": [
        # Neighbours compared in the given order, without sorting.
        ("def is_prefix_free(codewords):\n"
         "    return not any(b.startswith(a) or a.startswith(b)\n"
         "                   for a, b in zip(codewords, codewords[1:]))\n", 0),
        # Duplicates removed first, so a repeated codeword passes.
        ("def is_prefix_free(codewords):\n"
         "    words = sorted(set(codewords))\n"
         "    return not any(b.startswith(a) for a, b in zip(words, words[1:]))\n", 0),
        # Only a later codeword starting with an earlier one is detected.
        ("def is_prefix_free(codewords):\n"
         "    n = len(codewords)\n"
         "    return not any(codewords[j].startswith(codewords[i])\n"
         "                   for i in range(n) for j in range(i + 1, n))\n", 0),
        # Sorted by length instead of alphabetically, then neighbours: misses some prefixes.
        ("def is_prefix_free(codewords):\n"
         "    words = sorted(codewords, key=len)\n"
         "    return not any(b.startswith(a) for a, b in zip(words, words[1:]))\n", 1),
    ],
    "two_part_codelength": [
        # The lecture's parameter count: k = degree + 1 (the noise variance not counted).
        ("import numpy as np\n"
         "def two_part_codelength(x, y, degree, precision=0.01):\n"
         "    x, y = np.asarray(x, float), np.asarray(y, float)\n"
         "    n = len(y)\n"
         "    if n <= degree + 1:\n"
         "        raise ValueError('too few points')\n"
         "    r = y - np.polyval(np.polyfit(x, y, degree), x)\n"
         "    s2 = np.mean(r ** 2)\n"
         "    if s2 <= 1e-20 * np.mean(y ** 2):\n"
         "        raise ValueError('exact fit')\n"
         "    data = n * (-np.log2(precision) + 0.5 * np.log2(2 * np.pi * s2)) \\\n"
         "        + np.sum(r ** 2) / (2 * s2 * np.log(2))\n"
         "    return float((degree + 1) / 2 * np.log2(n) + data)\n", 1),
        # Natural logarithms: nats instead of bits.
        ("import numpy as np\n"
         "def two_part_codelength(x, y, degree, precision=0.01):\n"
         "    x, y = np.asarray(x, float), np.asarray(y, float)\n"
         "    n = len(y)\n"
         "    if n <= degree + 1:\n"
         "        raise ValueError('too few points')\n"
         "    r = y - np.polyval(np.polyfit(x, y, degree), x)\n"
         "    s2 = np.mean(r ** 2)\n"
         "    if s2 <= 1e-20 * np.mean(y ** 2):\n"
         "        raise ValueError('exact fit')\n"
         "    data = n * (-np.log(precision) + 0.5 * np.log(2 * np.pi * s2)) "
         "+ np.sum(r ** 2) / (2 * s2)\n"
         "    return float((degree + 2) / 2 * np.log(n) + data)\n", 1),
        # The unbiased variance (divide by N - degree - 1) instead of the ML one.
        ("import numpy as np\n"
         "def two_part_codelength(x, y, degree, precision=0.01):\n"
         "    x, y = np.asarray(x, float), np.asarray(y, float)\n"
         "    n = len(y)\n"
         "    if n <= degree + 1:\n"
         "        raise ValueError('too few points')\n"
         "    r = y - np.polyval(np.polyfit(x, y, degree), x)\n"
         "    s2 = np.sum(r ** 2) / (n - degree - 1)\n"
         "    if s2 <= 1e-20 * np.mean(y ** 2):\n"
         "        raise ValueError('exact fit')\n"
         "    data = n * (-np.log2(precision) + 0.5 * np.log2(2 * np.pi * s2)) \\\n"
         "        + np.sum(r ** 2) / (2 * s2 * np.log(2))\n"
         "    return float((degree + 2) / 2 * np.log2(n) + data)\n", 1),
        # No input checks: right values, but no ValueError for too few points or an exact fit.
        ("import numpy as np\n"
         "def two_part_codelength(x, y, degree, precision=0.01):\n"
         "    x, y = np.asarray(x, float), np.asarray(y, float)\n"
         "    n = len(y)\n"
         "    r = y - np.polyval(np.polyfit(x, y, degree), x)\n"
         "    s2 = np.mean(r ** 2)\n"
         "    with np.errstate(all='ignore'):\n"
         "        data = n * (-np.log2(precision) + 0.5 * np.log2(2 * np.pi * s2)) \\\n"
         "            + np.sum(r ** 2) / (2 * s2 * np.log(2))\n"
         "    return float((degree + 2) / 2 * np.log2(n) + data)\n", 3),
        # k log2 N for the model instead of (k/2) log2 N.
        ("import numpy as np\n"
         "def two_part_codelength(x, y, degree, precision=0.01):\n"
         "    x, y = np.asarray(x, float), np.asarray(y, float)\n"
         "    n = len(y)\n"
         "    if n <= degree + 1:\n"
         "        raise ValueError('too few points')\n"
         "    r = y - np.polyval(np.polyfit(x, y, degree), x)\n"
         "    s2 = np.mean(r ** 2)\n"
         "    if s2 <= 1e-20 * np.mean(y ** 2):\n"
         "        raise ValueError('exact fit')\n"
         "    data = n * (-np.log2(precision) + 0.5 * np.log2(2 * np.pi * s2)) \\\n"
         "        + np.sum(r ** 2) / (2 * s2 * np.log(2))\n"
         "    return float((degree + 2) * np.log2(n) + data)\n", 1),
        # The precision forgotten: the density alone, as if y were sent with precision 1.
        ("import numpy as np\n"
         "def two_part_codelength(x, y, degree, precision=0.01):\n"
         "    x, y = np.asarray(x, float), np.asarray(y, float)\n"
         "    n = len(y)\n"
         "    if n <= degree + 1:\n"
         "        raise ValueError('too few points')\n"
         "    r = y - np.polyval(np.polyfit(x, y, degree), x)\n"
         "    s2 = np.mean(r ** 2)\n"
         "    if s2 <= 1e-20 * np.mean(y ** 2):\n"
         "        raise ValueError('exact fit')\n"
         "    data = n * 0.5 * np.log2(2 * np.pi * s2) + np.sum(r ** 2) / (2 * s2 * np.log(2))\n"
         "    return float((degree + 2) / 2 * np.log2(n) + data)\n", 1),
    ],
}

HONEST = {
    "loops": {
        "entropy":
            "import math\n"
            "def entropy(p, base=2):\n"
            "    h = 0.0\n"
            "    for pk in p:\n"
            "        if pk > 0:\n"
            "            h -= pk * math.log(pk, base)\n"
            "    return h\n",
        "cross_entropy":
            "import math\n"
            "def cross_entropy(p, q, base=2):\n"
            "    total = 0.0\n"
            "    for pk, qk in zip(p, q):\n"
            "        if pk == 0:\n"
            "            continue\n"
            "        if qk == 0:\n"
            "            return math.inf\n"
            "        total -= pk * math.log(qk) / math.log(base)\n"
            "    return total\n",
        "kl_divergence":
            "import math\n"
            "def kl_divergence(p, q, base=2):\n"
            "    total = 0.0\n"
            "    for pk, qk in zip(p, q):\n"
            "        if pk > 0:\n"
            "            if qk == 0:\n"
            "                return math.inf\n"
            "            total += pk * (math.log(pk) - math.log(qk))\n"
            "    return total / math.log(base)\n",
        # The textbook version with a sorted list (quadratic time), returning a Python list.
        "huffman_code_lengths":
            "def huffman_code_lengths(p):\n"
            "    groups = [[float(w), [k]] for k, w in enumerate(p)]\n"
            "    lengths = [0] * len(groups)\n"
            "    while len(groups) > 1:\n"
            "        groups.sort(key=lambda g: g[0], reverse=True)\n"
            "        w1, s1 = groups.pop()\n"
            "        w2, s2 = groups.pop()\n"
            "        for k in s1 + s2:\n"
            "            lengths[k] += 1\n"
            "        groups.append([w1 + w2, s1 + s2])\n"
            "    return lengths\n",
        "is_prefix_free":
            "def is_prefix_free(codewords):\n"
            "    for i, a in enumerate(codewords):\n"
            "        for j, b in enumerate(codewords):\n"
            "            if i != j and b[:len(a)] == a:\n"
            "                return False\n"
            "    return True\n",
        # Normal equations on a centred, scaled Vandermonde matrix; the closed form of the sum.
        "two_part_codelength":
            "import numpy as np\n"
            "def two_part_codelength(x, y, degree, precision=0.01):\n"
            "    x = np.asarray(x, dtype=float)\n"
            "    y = np.asarray(y, dtype=float)\n"
            "    n = len(y)\n"
            "    if n <= degree + 1:\n"
            "        raise ValueError('need more points than coefficients')\n"
            "    t = (x - x.mean()) / (x.std() if x.std() > 0 else 1.0)\n"
            "    V = np.vander(t, degree + 1)\n"
            "    coef, *_ = np.linalg.lstsq(V, y, rcond=None)\n"
            "    s2 = np.mean((y - V @ coef) ** 2)\n"
            "    if s2 <= 1e-20 * np.mean(y ** 2):\n"
            "        raise ValueError('exact fit')\n"
            "    return float((degree + 2) / 2 * np.log2(n) + n * np.log2(1 / precision)\n"
            "                 + n / 2 * np.log2(2 * np.pi * np.e * s2))\n",
    },
    "scipy_and_numpy_types": {
        "entropy":
            "from scipy import stats\n"
            "def entropy(p, base=2):\n"
            "    return stats.entropy(p, base=base)\n",
        "cross_entropy":
            "import numpy as np\n"
            "from scipy.special import xlogy\n"
            "def cross_entropy(p, q, base=2):\n"
            "    with np.errstate(divide='ignore'):\n"
            "        return -np.sum(xlogy(p, q)) / np.log(base)\n",
        "kl_divergence":
            "import numpy as np\n"
            "from scipy.special import rel_entr\n"
            "def kl_divergence(p, q, base=2):\n"
            "    return np.sum(rel_entr(p, q)) / np.log(base)\n",
        # Huffman on a heap of (probability, counter, node) with parent pointers; int64 array.
        "huffman_code_lengths":
            "import heapq\n"
            "import numpy as np\n"
            "def huffman_code_lengths(p):\n"
            "    K = len(p)\n"
            "    parent = {}\n"
            "    heap = [(float(w), i) for i, w in enumerate(p)]\n"
            "    heapq.heapify(heap)\n"
            "    new = K\n"
            "    while len(heap) > 1:\n"
            "        wa, a = heapq.heappop(heap)\n"
            "        wb, b = heapq.heappop(heap)\n"
            "        parent[a] = parent[b] = new\n"
            "        heapq.heappush(heap, (wa + wb, new))\n"
            "        new += 1\n"
            "    def depth(node):\n"
            "        d = 0\n"
            "        while node in parent:\n"
            "            node, d = parent[node], d + 1\n"
            "        return d\n"
            "    return np.array([depth(i) for i in range(K)], dtype=np.int64)\n",
        # A trie of the codewords; returns a numpy bool.
        "is_prefix_free":
            "import numpy as np\n"
            "def is_prefix_free(codewords):\n"
            "    root = {}\n"
            "    for w in codewords:\n"
            "        node = root\n"
            "        for bit in w:\n"
            "            if node.get('end'):\n"
            "                return np.bool_(False)\n"
            "            node = node.setdefault(bit, {})\n"
            "        if node.get('end') or len(node) > 0:\n"
            "            return np.bool_(False)\n"
            "        node['end'] = True\n"
            "    return np.bool_(True)\n",
        "two_part_codelength":
            "import numpy as np\n"
            "from scipy import stats\n"
            "def two_part_codelength(x, y, degree, precision=0.01):\n"
            "    x = np.asarray(x, dtype=float)\n"
            "    y = np.asarray(y, dtype=float)\n"
            "    if len(y) <= degree + 1:\n"
            "        raise ValueError(f'N = {len(y)} is not larger than "
            "degree + 1 = {degree + 1}')\n"
            "    f = np.polynomial.Chebyshev.fit(x, y, degree)\n"
            "    r = y - f(x)\n"
            "    s2 = np.mean(r ** 2)\n"
            "    if s2 <= 1e-20 * np.mean(y ** 2):\n"
            "        raise ValueError('exact fit')\n"
            "    logpdf = stats.norm.logpdf(y, loc=f(x), scale=np.sqrt(s2))\n"
            "    return (degree + 2) / 2 * np.log2(len(y)) "
            "- np.sum(np.log2(precision) + logpdf / np.log(2))\n",
    },
    "warnings_and_prints": {
        "entropy":
            "import sys\n"
            "import numpy as np\n"
            "def entropy(p, base=2):\n"
            "    print('computing an entropy', file=sys.stderr)\n"
            "    p = np.asarray(p, dtype=float)\n"
            "    terms = p * np.log(p)             # RuntimeWarnings for zeros: 0 * -inf = nan\n"
            "    return float(-np.nansum(terms) / np.log(base))\n",
        "kl_divergence":
            "import warnings\n"
            "import numpy as np\n"
            "def kl_divergence(p, q, base=2):\n"
            "    warnings.warn('a harmless warning from the student')\n"
            "    p = np.asarray(p, dtype=float)\n"
            "    q = np.asarray(q, dtype=float)\n"
            "    terms = np.where(p > 0, p * np.log(p / q), 0.0)   # warnings for p = 0 or q = 0\n"
            "    return float(np.sum(terms) / np.log(base))\n",
        "huffman_code_lengths":
            "import sys\n"
            "import heapq\n"
            "def huffman_code_lengths(p):\n"
            "    print('building a Huffman tree for', len(p), 'symbols', file=sys.stderr)\n"
            "    heap = [(w, (i,)) for i, w in enumerate(p)]\n"
            "    heapq.heapify(heap)\n"
            "    L = [0] * len(p)\n"
            "    while len(heap) > 1:\n"
            "        wa, a = heapq.heappop(heap)\n"
            "        wb, b = heapq.heappop(heap)\n"
            "        for k in a + b:\n"
            "            L[k] += 1\n"
            "        heapq.heappush(heap, (wa + wb, a + b))\n"
            "    return tuple(L)\n",
    },
}

# ---------------------------------------------------------------- tasks beyond the chapter
# js_divergence and entropy_rate: a visible cell (2), an edge-case cell (2) and hidden tests
# (6), 10 each.
WRONG["js_divergence"] = [
    # The average not halved: m = p + q.
    ("import numpy as np\n"
     "def js_divergence(p, q, base=2):\n"
     "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
     "    m = p + q\n"
     "    def kl(a):\n"
     "        used = a > 0\n"
     "        return np.sum(a[used] * np.log(a[used] / m[used]))\n"
     "    return float((kl(p) + kl(q)) / 2 / np.log(base))\n", 0),
    # Only the first half: KL(p || m), not symmetric. The edge cases are mirror images
    # (KL(p || m) = KL(q || m) there), so only the visible and hidden cells catch it: 2.
    ("import numpy as np\n"
     "def js_divergence(p, q, base=2):\n"
     "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
     "    m = (p + q) / 2\n"
     "    used = p > 0\n"
     "    return float(np.sum(p[used] * np.log(p[used] / m[used])) / np.log(base))\n", 2),
    # base ignored (always bits): right on everything but the nats (visible) and other bases.
    ("import numpy as np\n"
     "def js_divergence(p, q, base=2):\n"
     "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
     "    m = (p + q) / 2\n"
     "    def kl(a):\n"
     "        used = a > 0\n"
     "        return np.sum(a[used] * np.log2(a[used] / m[used]))\n"
     "    return float((kl(p) + kl(q)) / 2)\n", 2),
    # 0 log 0 computed literally: nan where p or q is zero.
    ("import numpy as np\n"
     "def js_divergence(p, q, base=2):\n"
     "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
     "    m = (p + q) / 2\n"
     "    with np.errstate(all='ignore'):\n"
     "        total = np.sum(p * np.log(p / m)) + np.sum(q * np.log(q / m))\n"
     "        return float(total / 2 / np.log(base))\n",
     0),
]
WRONG["entropy_rate"] = [
    # The rows' entropies averaged with equal weights (pi taken as uniform).
    ("import numpy as np\n"
     "def entropy_rate(P, base=2):\n"
     "    P = np.asarray(P, float)\n"
     "    logs = np.log(np.where(P > 0, P, 1.0))\n"
     "    return float(-np.mean(np.sum(P * logs, axis=1)) / np.log(base))\n", 0),
    # pi from the right eigenvector of P (which is constant), not the left one.
    ("import numpy as np\n"
     "def entropy_rate(P, base=2):\n"
     "    P = np.asarray(P, float)\n"
     "    vals, vecs = np.linalg.eig(P)\n"
     "    pi = np.real(vecs[:, np.argmin(np.abs(vals - 1))]); pi = pi / pi.sum()\n"
     "    logs = np.log(np.where(P > 0, P, 1.0))\n"
     "    return float(-pi @ np.sum(P * logs, axis=1) / np.log(base))\n", 0),
    # base ignored.
    ("import numpy as np\n"
     "def entropy_rate(P, base=2):\n"
     "    P = np.asarray(P, float); K = len(P)\n"
     "    A = P.T - np.eye(K); A[-1] = 1.0\n"
     "    pi = np.linalg.solve(A, np.r_[np.zeros(K - 1), 1.0])\n"
     "    logs = np.log2(np.where(P > 0, P, 1.0))\n"
     "    return float(-pi @ np.sum(P * logs, axis=1))\n", 2),
]
HONEST["loops"]["js_divergence"] = (
    "import math\n"
    "def js_divergence(p, q, base=2):\n"
    "    total = 0.0\n"
    "    for a, b in zip(p, q):\n"
    "        m = (a + b) / 2\n"
    "        if a > 0:\n"
    "            total += a * math.log(a / m) / 2\n"
    "        if b > 0:\n"
    "            total += b * math.log(b / m) / 2\n"
    "    return total / math.log(base)\n")
HONEST["loops"]["entropy_rate"] = (
    # pi by power iteration on the lazy chain (I + P) / 2 (same pi, no periodicity).
    "import math\n"
    "import numpy as np\n"
    "def entropy_rate(P, base=2):\n"
    "    P = np.asarray(P, dtype=float); K = len(P)\n"
    "    lazy = (np.eye(K) + P) / 2\n"
    "    pi = np.full(K, 1.0 / K)\n"
    "    for _ in range(100000):\n"
    "        new = pi @ lazy\n"
    "        if np.abs(new - pi).max() < 1e-15:\n"
    "            break\n"
    "        pi = new\n"
    "    total = 0.0\n"
    "    for i in range(K):\n"
    "        for j in range(K):\n"
    "            if P[i, j] > 0:\n"
    "                total -= pi[i] * P[i, j] * math.log(P[i, j], base)\n"
    "    return total\n")
HONEST["scipy_and_numpy_types"]["js_divergence"] = (
    # H(m) - (H(p) + H(q)) / 2 with scipy.special.xlogy; a numpy scalar.
    "import numpy as np\n"
    "from scipy.special import xlogy\n"
    "def js_divergence(p, q, base=2):\n"
    "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
    "    H = lambda a: -np.sum(xlogy(a, a))\n"
    "    return np.maximum(H((p + q) / 2) - (H(p) + H(q)) / 2, 0.0) / np.log(base)\n")
HONEST["scipy_and_numpy_types"]["entropy_rate"] = (
    # pi as the left eigenvector of P for the eigenvalue 1 (scipy.linalg.eig).
    "import numpy as np\n"
    "from scipy import linalg\n"
    "from scipy.special import xlogy\n"
    "def entropy_rate(P, base=2):\n"
    "    P = np.asarray(P, float)\n"
    "    vals, left = linalg.eig(P, left=True, right=False)\n"
    "    pi = np.real(left[:, np.argmin(np.abs(vals - 1))])\n"
    "    pi = pi / pi.sum()\n"
    "    return pi @ (-np.sum(xlogy(P, P), axis=1)) / np.log(base)\n")

SHORTCUTS = {
    # The nearest printed example: the KL divergence, symmetrised. Infinite for disjoint
    # supports and another number elsewhere: 0 of 10.
    "js_symmetrised_kl": ("js_divergence",
        "import numpy as np\n"
        "def js_divergence(p, q, base=2):\n"
        "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
        "    def kl(a, b):\n"
        "        used = a > 0\n"
        "        if np.any(b[used] == 0):\n"
        "            return np.inf\n"
        "        return np.sum(a[used] * np.log(a[used] / b[used]))\n"
        "    return float((kl(p, q) + kl(q, p)) / 2 / np.log(base))\n", 0),
    # The nearest printed example: the entropy of the stationary distribution, H(pi), as if
    # the symbols were independent. Right only when every row is pi: 0 of 10.
    "entropy_rate_of_pi": ("entropy_rate",
        "import numpy as np\n"
        "def entropy_rate(P, base=2):\n"
        "    P = np.asarray(P, float); K = len(P)\n"
        "    A = P.T - np.eye(K); A[-1] = 1.0\n"
        "    pi = np.linalg.solve(A, np.r_[np.zeros(K - 1), 1.0])\n"
        "    pi = pi[pi > 0]\n"
        "    return float(-np.sum(pi * np.log(pi)) / np.log(base))\n", 0),
}

# The np.where idiom for 0 log 0 = 0: both branches are computed, so log 0 (and 0 / 0 in the
# discarded branch) warn. Warnings never cost points: each keeps full marks.
HONEST["where_idioms"] = {
    "entropy":
        "import numpy as np\n"
        "def entropy(p, base=2):\n"
        "    p = np.asarray(p, dtype=float)\n"
        "    return float(-np.sum(np.where(p > 0, p * np.log(p), 0.0)) / np.log(base))\n",
    "cross_entropy":
        "import numpy as np\n"
        "def cross_entropy(p, q, base=2):\n"
        "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
        "    return float(-np.sum(np.where(p > 0, p * np.log(q), 0.0)) / np.log(base))\n",
    "js_divergence":
        "import numpy as np\n"
        "def js_divergence(p, q, base=2):\n"
        "    p, q = np.asarray(p, float), np.asarray(q, float)\n"
        "    m = (p + q) / 2\n"
        "    kl = lambda a: np.sum(np.where(a > 0, a * np.log(a / m), 0.0))\n"
        "    return float((kl(p) + kl(q)) / 2 / np.log(base))\n",
    "entropy_rate":
        "import numpy as np\n"
        "def entropy_rate(P, base=2):\n"
        "    P = np.asarray(P, float); K = len(P)\n"
        "    A = P.T - np.eye(K); A[-1] = 1.0\n"
        "    pi = np.linalg.solve(A, np.r_[np.zeros(K - 1), 1.0])\n"
        "    rows = -np.sum(np.where(P > 0, P * np.log(P), 0.0), axis=1)\n"
        "    return float(pi @ rows / np.log(base))\n",
}
