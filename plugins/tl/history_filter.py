"""The TL history filter (Mu et al., section III-A): history records are kept when their
feature vectors are close to the input's, with every feature weighted by its importance.

Importance is a moving average (exponential, weight ``decay`` on the newest fit) of how
often each feature splits the model's trees, normalized to sum 1. Similarity of a
record is 1 / (1 + d) where d is the importance-weighted Euclidean distance (features in
units of their standard deviation over records and references; a missing value counts
one deviation) to the nearest reference vector. The references are the input task's best
measured configs with its task specification; before it has measured anything, its
task specification alone (records of the most similar tasks are kept first).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

_CHUNK = 256


@dataclass
class FeatureImportance:
    """Moving average of the split counts of successive models."""

    decay: float = 0.3
    values: np.ndarray | None = field(default=None)

    def update(self, split_counts: np.ndarray) -> np.ndarray:
        """Fold one model's split counts in; returns the new weights (summing to 1)."""
        counts = np.asarray(split_counts, dtype=np.float64)
        total = counts.sum()
        share = counts / total if total > 0 else np.full(len(counts), 1.0 / max(len(counts), 1))
        if self.values is None or len(self.values) != len(share):
            self.values = share
        else:
            self.values = (1 - self.decay) * self.values + self.decay * share
        return self.values

    def weights(self, width: int) -> np.ndarray:
        """Current weights (uniform before the first update)."""
        if self.values is None or len(self.values) != width:
            return np.full(width, 1.0 / max(width, 1))
        return self.values


def weighted_similarity(records: np.ndarray, references: np.ndarray,
                        weights: np.ndarray) -> np.ndarray:
    """Similarity in (0, 1] of every record row to its nearest reference row.

    A feature a reference leaves NaN is not compared (before this task has measured
    anything, its knob features are unknown); a record's NaN counts one deviation.
    When no compared feature has any importance yet, they all weigh the same.
    """
    if len(records) == 0:
        return np.zeros(0)
    if len(references) == 0:
        return np.ones(len(records))
    compared = ~np.isnan(references).all(axis=0)
    w = np.where(compared, np.asarray(weights, dtype=np.float64), 0.0)
    if w.sum() <= 0:
        w = compared.astype(np.float64)
    both = np.vstack([records, references])
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        scale = np.nanstd(both, axis=0)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    refs = references / scale
    out = np.empty(len(records))
    for lo in range(0, len(records), _CHUNK):
        rec = records[lo:lo + _CHUNK] / scale
        diff = rec[:, None, :] - refs[None, :, :]
        diff = np.where(np.isnan(refs)[None, :, :], 0.0, np.where(np.isnan(diff), 1.0, diff))
        d2 = np.einsum("rnf,f->rn", diff * diff, w / w.sum())
        out[lo:lo + _CHUNK] = 1.0 / (1.0 + np.sqrt(d2.min(axis=1)))
    return out


def select_similar(similarity: np.ndarray, keep: float, min_keep: int) -> np.ndarray:
    """Indices of the most similar records: the top ``keep`` share, at least
    ``min_keep`` of them (all when there are fewer), most similar first."""
    n = len(similarity)
    count = min(n, max(int(round(keep * n)), min_keep))
    order = np.lexsort((np.arange(n), -similarity))
    return order[:count]
