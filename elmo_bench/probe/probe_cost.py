"""What ``elmo-bench plan`` needs to price a probe run, torch-free: the sizes of the sentences a probe sends through
the encoder (:class:`SplitCount` per split) and the FLOPs of its training over the cached layers
(:class:`ProbeCost`), which each probe's ``cost`` function (its declaration's ``cost`` target) estimates from its
settings. The FLOP counts are matrix products only (2 FLOPs a multiply-add); a training step over a token costs
3x its forward (forward, and backward into the weights and the inputs), as for any dense layer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

#: UD English-EWT's tag sets (the classes a POS probe predicts): the Penn tags seen in its training split, UPOS, and
#: the universal dependency relations (the part before ":") seen in its training split
TAG_CLASSES = {"xpos": 49, "upos": 17, "deprel": 36}


@dataclass(frozen=True)
class SplitCount:
    """One split as the encoder sees it: sentences, tokens, and the sum of squared sentence lengths (the pairwise
    terms of the structural distance probe)."""

    sentences: int
    tokens: int
    squared: int

    @property
    def pair_length(self) -> float:
        """Σn² / Σn: the sentence length a token sees on average (token-weighted)."""
        return self.squared / self.tokens if self.tokens else 0.0


#: L-BFGS iterations one converged fit takes, on average (plan's expectation; ``max_iter`` is only the bound):
#: 7,484 iterations over the 41 fits (every L2 of every row, the extension fits included) of the committed records
#: that list each fit's iterations, docs/results/probes/pos_v2_final_4000 and docs/results/probe_suite/bilm_v2/pos
#: (the shipped biLM and GloVe rows, 4,000 and 2,000 EWT sentences, tol 1e-4); they hardly depend on the train size
#: (178 and 190 a fit). tests/test_plan_expected_iterations.py counts them again from the records
EXPECTED_ITERATIONS = 183
#: fits a row makes past its L2 grid on average (fit_select_l2 goes on down while the weakest L2 is the best): 5
#: extension fits in those records' 9 rows
EXTRA_FITS = 5 / 9


@dataclass(frozen=True)
class ProbeCost:
    """A probe run's training FLOPs over cached layers (an upper bound where epochs or iterations can stop early),
    how many times it reads each split's layers (with ``cache=false`` each read computes them again), and the
    formula in words (the row's ``train_formula``). ``lbfgs_bound`` and ``lbfgs_expected``: the part of
    ``train_flops`` that full-batch L-BFGS fits do (at ``max_iter`` iterations a fit), and the same fits at their
    expected iterations (:data:`EXPECTED_ITERATIONS`): plan prices :attr:`expected_flops`, with L-BFGS's own CPU
    rate (elmo_bench.commands.plan_cpu). ``encoder_flops``: set by a probe that runs the encoder itself
    rather than reading the activation cache (its declaration's ``run_cost``): its encoder FLOPs, the row's
    ``encoder_flops`` then, with no cache bytes. ``twin``: the run also reads the encoder's ``random_init=all``
    twin over the same sentences (conditional's ``random`` baseline): plan prices that second encoder too."""

    train_flops: float
    formula: str
    reads: int = 1
    encoder_flops: float | None = None
    twin: bool = False
    lbfgs_bound: float = 0.0
    lbfgs_expected: float = 0.0

    @property
    def expected_flops(self) -> float:
        """The training FLOPs with every L-BFGS fit at its expected iterations (the rest as ``train_flops``)."""
        return self.train_flops - self.lbfgs_bound + self.lbfgs_expected


def counted(sentences: Sequence[Sequence[str]]) -> SplitCount:
    return SplitCount(len(sentences), sum(len(s) for s in sentences), sum(len(s) ** 2 for s in sentences))


def cut_train(documented: Mapping[str, SplitCount], max_train: int | None, split: str = "train"
              ) -> dict[str, SplitCount]:
    """Documented full-data sizes with ``split`` (train) cut to its first ``max_train`` sentences (tokens scaled);
    unchanged when the probe reads no such split."""
    out = dict(documented)
    if split not in documented:
        return out
    full = documented[split]
    if max_train and max_train < full.sentences:
        share = max_train / full.sentences
        out[split] = SplitCount(max_train, round(full.tokens * share), round(full.squared * share))
    return out


def probed(layers: Sequence[int] | None, count: int) -> int:
    """How many layers ``probe.layers`` probes (null: every one of the encoder's ``count``)."""
    return count if layers is None else len(layers)


def classifier_params(kind: str, width: int, classes: int, hidden: int, rank: int) -> int:
    """Weights of one of the papers' probes (elmo_bench.probe.lib.classifiers.build_probe): linear ``width x rank +
    rank x K``, MLP-1 ``width x h + h x K``, MLP-2 ``width x h + h x h + h x K``; the converged probe ``width x K``."""
    if kind == "linear":
        return width * rank + rank * classes
    if kind == "mlp1":
        return width * hidden + hidden * classes
    if kind == "mlp2":
        return width * hidden + hidden * hidden + hidden * classes
    return width * classes


def epochs_flops(params: int, sizes: Mapping[str, SplitCount], epochs: int, passes: float = 1.0) -> float:
    """A probe of ``params`` weights trained ``epochs`` epochs by minibatches: each epoch a training step over
    ``passes`` x the train tokens (6 P a token) and the dev split's forward for early stopping (2 P a token); then
    dev and test scored once (2 P a token)."""
    train, dev, test = sizes["train"].tokens, sizes["dev"].tokens, sizes["test"].tokens
    return epochs * (6 * params * train * passes + 2 * params * dev) + 2 * params * (dev + test)


def converged_fit_flops(max_iter: int, width: int, classes: int, train: int, scored: int) -> float:
    """One converged (L-BFGS, full-batch) softmax probe of ``width`` inputs and K ``classes``: at most ``max_iter``
    passes over the ``train`` tokens (forward and gradient, 6 w K a token; an upper bound, it stops at ``tol``),
    then ``scored`` tokens scored (2 w K a token)."""
    return max_iter * 6 * width * classes * train + 2 * width * classes * scored


def expected_fit_flops(max_iter: int, width: int, classes: int, train: int, scored: int) -> float:
    """:func:`converged_fit_flops` at the expected iterations (:data:`EXPECTED_ITERATIONS`, at most ``max_iter``)."""
    return converged_fit_flops(min(max_iter, EXPECTED_ITERATIONS), width, classes, train, scored)


def log_classes(classes: int) -> float:
    return math.log2(max(classes, 2))


#: UD English-EWT v2.16 as shared/data/SOURCES.md lists it (sentences, words, Σ words²: counted by the probes'
#: readers there), for a plan where the data is not readable
UD_EWT_SIZES = {"train": SplitCount(12544, 204577, 5265593), "dev": SplitCount(2001, 25147, 533021),
                "test": SplitCount(2077, 25094, 536688)}
