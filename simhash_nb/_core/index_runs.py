"""The sorted runs of a :class:`~simhash_nb.SimhashIndex`: each covers a slot range with
its own tables (packed pigeonhole words, or sampled tables when the index has a
``recall``) and its ids sorted for lookup."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from .._kernels import tables as _tk
from ..config import config
from .parallel import deferred_interrupt
from .search.design import best_sampling, best_tables, pair_count
from .search.families import sampled
from .search.groups import threads_for
from .search.layout import Layout, Plan, top_bits


class Run:
    """Tables and sorted ids over the slots ``[lo, hi)`` of ``slot_fps`` and ``slot_ids``."""

    def __init__(self, index, slot_fps: np.ndarray, slot_ids: np.ndarray,
                 lo: int, hi: int):
        self.lo, self.hi = lo, hi
        m = hi - lo
        fps = slot_fps[lo:hi]
        if index.recall is not None:
            self.layout, self.plan = sampled_layout(index, m)
        else:
            blocks = index.blocks or best_tables(m, pair_count(m, None), index.k,
                                                 index.bits).blocks
            self.layout = Layout.make(index.bits, index.k, blocks)
            self.plan = self.layout.plan(m)
        n_tables = self.layout.n_tables
        self.tabs = np.empty((n_tables, m), dtype=np.uint64)
        tmp = np.empty(m, dtype=np.uint64)
        plan, layout = self.plan, self.layout
        with threads_for(m):
            for t in range(n_tables):  # Ctrl-C is answered between two tables
                with deferred_interrupt():  # see parallel.deferred_interrupt
                    _tk.sort_table(
                        fps, layout.key_pieces[t], plan.extra_pieces[t],
                        bool(plan.hashed[t]), int(plan.key_bits[t]),
                        int(plan.extra_bits[t]), plan.row_bits, top_bits(m),
                        config["radix_local_bits"], numba.get_num_threads(), self.tabs[t],
                        tmp,
                    )
        ids = slot_ids[lo:hi]
        order = np.argsort(ids, kind="stable")
        self.id_sorted = ids[order]
        self.id_slot = order.astype(np.int64) + lo

    @property
    def size(self) -> int:
        return self.hi - self.lo


def sampled_layout(index, m: int) -> tuple[Layout, Plan]:
    """Sampled tables (``recall < 1``) as a layout the query kernel reads: each sampled
    mask is a "block" and each table selects one block, so the kernel's ownership rule
    (the first ``b - k = 1`` agreeing blocks) is the first table whose bits the pair
    agrees on. No extra bits are stored (sampled masks overlap: a bit could count twice)."""
    d = best_sampling(m, pair_count(m, None), index.k, index.bits, index.recall)
    words = index.bits // 64
    family = sampled(index.bits, d.key_bits, d.tables, index.random_state)
    layout = Layout.from_masks(index.bits, d.tables - 1,
                               np.ascontiguousarray(family.masks[:, :words]))
    plan = layout.plan(m)
    plan = dataclasses.replace(plan, extra_bits=np.zeros_like(plan.extra_bits),
                               extra_pieces=np.zeros((layout.n_tables, 0, 4), np.uint64))
    return layout, plan
