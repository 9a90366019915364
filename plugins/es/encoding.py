"""Knob encodings shared by the searchers: integer positions and the unit cube."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from orchestrator.space import Config, Space, SplitKnob


def _order(knob: object) -> tuple[int, ...]:
    """Choice indices in the order the searchers walk them.

    A split knob's choices are listed outermost factor first, so neighbouring indices
    jump between unrelated inner tiles. Sorting by the reversed tuple makes the inner
    factor (which matters most for registers and vectors) vary slowest, so that nearby
    positions are similar schedules.
    """
    choices = knob.choices  # type: ignore[attr-defined]
    if isinstance(knob, SplitKnob):
        return tuple(sorted(range(len(choices)), key=lambda i: tuple(reversed(choices[i]))))
    return tuple(range(len(choices)))


class KnobEncoding:
    """One axis per knob with more than one choice; knobs with a single choice are fixed.

    A config is a tuple of integer *positions* (one per axis, ``0 .. size-1``) or a
    point of the unit cube, where position ``p`` of an axis of ``n`` choices covers
    ``[p/n, (p+1)/n)`` and is encoded as its centre.
    """

    def __init__(self, space: Space) -> None:
        self.space = space
        self.orders = tuple(_order(k) for k in space.knobs)
        self.axes = tuple(j for j, k in enumerate(space.knobs) if len(k.choices) > 1)
        self.sizes = tuple(len(space.knobs[j].choices) for j in self.axes)
        self.names = tuple(space.knobs[j].name for j in self.axes)
        self._position_of = tuple({c: p for p, c in enumerate(order)} for order in self.orders)

    @property
    def dim(self) -> int:
        return len(self.axes)

    def config(self, positions: Sequence[int]) -> Config:
        indices = [order[0] for order in self.orders]
        for j, p in zip(self.axes, positions, strict=True):
            indices[j] = self.orders[j][int(p)]
        return self.space.config_at(indices)

    def positions(self, config: Config) -> tuple[int, ...]:
        indices = self.space.indices(config)
        return tuple(self._position_of[j][indices[j]] for j in self.axes)

    def to_unit(self, positions: Sequence[int]) -> np.ndarray:
        return (np.asarray(positions, dtype=float) + 0.5) / np.asarray(self.sizes, dtype=float)

    def from_unit(self, point: Sequence[float]) -> tuple[int, ...]:
        """Nearest position on each axis (points outside the cube are clipped)."""
        sizes = np.asarray(self.sizes)
        scaled = np.floor(np.clip(np.asarray(point, dtype=float), 0.0, 1.0) * sizes)
        return tuple(int(p) for p in np.minimum(scaled, sizes - 1))
