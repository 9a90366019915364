"""The gga searcher: conformance, guided operators, history candidates, no-history fallback."""

from __future__ import annotations

import math
import random

import pytest

from history.similarity import candidate_configs, interleave_tasks, kin_first, rank_history
from orchestrator.components import SearchContext
from orchestrator.errors import OptionError
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import ChoiceKnob, Config, Space, SplitKnob, divisors
from orchestrator.task import Task
from orchestrator.testing import TOY_TASK, SearcherConformance, toy_latency, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET
from orchestrator.testing.replay import ReplayMeasurer
from plugins.gga.operators import (
    crossover,
    expertise_values,
    mutate_elite,
    mutate_expertise,
    mutate_random,
    refit_split,
    select_proportional,
    swapped_splits,
)
from plugins.gga.screen import ChildScreen, spread_rows
from plugins.gga.searcher import GuidedGA, performance
from tests.plugins.gga.fake_history import FAR, NEAR, FakeHistory, context, toy_history


class TestGGAConformance(SearcherConformance):
    def create_searcher(self):
        return GuidedGA()


class TestGGAHandoffConformance(SearcherConformance):
    """Small generations stall soon: most of these runs end in the ``tl`` tuner."""

    def create_searcher(self):
        return GuidedGA(population=4, elite=2, handoff=1)


A = Config.of({"tile_m": (4, 4, 4), "tile_n": (4, 1, 16), "tile_k": (8, 8), "unroll": 16})
B = Config.of({"tile_m": (16, 2, 2), "tile_n": (4, 1, 16), "tile_k": (4, 16), "unroll": 64})


def test_crossover_switches_exactly_one_gene_from_the_other_parent():
    space = toy_space()
    for seed in range(20):
        child, (name, value) = crossover(random.Random(seed), A, B, space)
        changed = [k.name for k in space.knobs if child[k.name] != A[k.name]]
        assert changed == [name] and value == B[name] and name in ("tile_m", "tile_k", "unroll")
    assert crossover(random.Random(0), A, A, space) is None


def test_elite_mutation_takes_a_gene_from_the_elite_dictionary():
    elite = {"unroll": [64], "tile_k": [(8, 8), (2, 32)]}
    for seed in range(20):
        child, (name, value) = mutate_elite(random.Random(seed), A, elite)
        assert value in elite[name] and child[name] == value and A[name] != value
    assert mutate_elite(random.Random(0), A, {"unroll": [16]}) is None


def test_expertise_mutation_uses_divisors_of_the_extent_and_small_factors_only():
    knob = SplitKnob.perfect("t", 24, 3)
    values = expertise_values(knob, (6, 2, 2))
    assert values and all(v in knob.choices for v in values)
    for v in values:
        diffs = [i for i in (1, 2) if v[i] != (6, 2, 2)[i]]
        assert len(diffs) == 1  # one inner factor changed, the outer one recomputed
        assert v[diffs[0]] in divisors(24)
    # an extent that 4 does not divide never gets a 4; one 2 cannot be made 4 either
    odd = SplitKnob.perfect("o", 6, 2)
    assert expertise_values(odd, (3, 2)) == [(6, 1), (2, 3), (1, 6)]
    unroll = ChoiceKnob("u", (0, 16, 64))
    assert expertise_values(unroll, 16) == [0, 64] and expertise_values(unroll, 0) == [16]
    space = toy_space()
    child, (name, value) = mutate_expertise(random.Random(1), A, space)
    assert child[name] == value and value in expertise_values(space.knob(name), A[name])


def test_refit_keeps_the_new_factor_and_refits_the_others_around_it():
    # tile_x of a 28-wide output: a register tile of 7 under a middle factor of 14 does
    # not divide 28; the middle factor becomes the divisor of 4 nearest 14
    assert refit_split((1, 1, 14, 2), 28, 3, 7) == (1, 1, 4, 7)
    assert refit_split((1, 1, 14, 2), 28, 3, 3) is None  # 3 does not divide 28
    knob = SplitKnob.perfect("x", 28, 4)
    plain = expertise_values(knob, (1, 1, 14, 2))
    wide = expertise_values(knob, (1, 1, 14, 2), refit=True)
    assert (1, 1, 4, 7) in wide and (1, 1, 4, 7) not in plain
    assert set(plain) <= set(wide) and all(v in knob.choices for v in wide)
    for v in wide:
        assert math.prod(v) == 28 and v != (1, 1, 14, 2)
    child, (name, value) = mutate_expertise(random.Random(3), A, toy_space(), refit=True)
    assert child[name] == value
    assert value in expertise_values(toy_space().knob(name), A[name], refit=True)


def test_swap_exchanges_two_factors_of_a_split_in_one_move():
    # r18_c1's tile_x of 112: 7 under 8 to 8 under 7, which replacing one inner factor
    # cannot reach (8 at the third level leaves 112 / 64 for the outer one)
    assert swapped_splits((2, 1, 7, 8)) == [
        (1, 2, 7, 8), (7, 1, 2, 8), (8, 1, 7, 2), (2, 7, 1, 8), (2, 8, 7, 1), (2, 1, 8, 7)]
    assert swapped_splits((4, 4)) == []  # equal factors: nothing to exchange
    knob = SplitKnob.perfect("x", 112, 4)
    plain = expertise_values(knob, (2, 1, 7, 8))
    swapped = expertise_values(knob, (2, 1, 7, 8), swap=True)
    assert (2, 1, 8, 7) in swapped and (2, 1, 8, 7) not in plain
    assert swapped[:len(plain)] == plain  # the swaps come after, none repeated
    assert len(set(swapped)) == len(swapped) and (2, 1, 7, 8) not in swapped
    # only the knob's own choices: a split whose innermost factor is held to a few values
    narrow = SplitKnob("y", 6, 2, ((6, 1), (3, 2)))
    assert expertise_values(narrow, (3, 2), swap=True) == [(6, 1)]  # (2, 3) is not one
    unroll = ChoiceKnob("u", (0, 16, 64))
    assert expertise_values(unroll, 16, swap=True) == [0, 64]


def test_gga_swap_option_reaches_exchanged_splits_and_is_checked():
    knob = SplitKnob.perfect("x", 112, 4)
    space = Space(TOY_TASK, "toy", (knob,), "orchestrator.testing.toy:no_schedule")
    best = Config.of({"x": (2, 1, 7, 8)})
    seen = set()
    for seed in range(40):
        child, (name, value) = mutate_expertise(random.Random(seed), best, space, swap=True)
        seen.add(value)
    assert seen & set(swapped_splits((2, 1, 7, 8))) - set(expertise_values(knob, (2, 1, 7, 8)))
    assert GuidedGA(swap=True).swap and not GuidedGA().swap
    with pytest.raises(OptionError, match="swap"):
        GuidedGA(swap="maybe")


def test_refit_option_must_be_a_boolean():
    with pytest.raises(OptionError, match="^searcher 'gga': option refit must be true or false, "
                                          "got 'maybe'$"):
        GuidedGA(refit="maybe")
    assert GuidedGA(refit=True).refit is True
    assert GuidedGA(refit="yes").refit is True  # as from the command line


def test_next_population_is_drawn_by_performance_and_keeps_the_best():
    rng = random.Random(0)
    scored = [(A, 0.0), (B, 5.0)]
    assert select_proportional(rng, scored, 8, keep=[A]) == [A] + [B] * 7
    assert select_proportional(rng, [(A, 0.0), (B, 0.0)], 3)  # all failed: uniform


def test_first_generation_comes_from_history_by_filtering_metric():
    history = toy_history([*NEAR, *FAR])
    s = GuidedGA(probe=0)
    s.start(context(history))
    expected = candidate_configs(rank_history(history, toy_space(), TOY_TARGET), toy_space(), 16)
    assert s.from_history == 16
    first = _drain(s, 16)
    assert [c.key for c in first] == [c.key for c, _ in expected]


def _probes_of(space: Space, probes: list[Config], base: Config, genes: dict) -> bool:
    """Whether every probe is a guided child of ``base`` with one knob changed to an
    expertise value (a probe is a guided child: it has its gene), and at most one other
    knob changed by a repair."""
    for probe in probes:
        name, value = genes[probe.key]
        changed = [k.name for k in space.knobs if probe[k.name] != base[k.name]]
        if probe[name] != value or value not in expertise_values(space.knob(name), base[name]) \
                or name not in changed or len(changed) > 2:
            return False
    return True


def _same_first_generation(**options) -> bool:
    """Whether gga with ``options`` proposes the same first generation as with its defaults."""
    history = toy_history([*NEAR, *FAR])
    a, b = GuidedGA(probe=3), GuidedGA(probe=3, **options)
    a.start(context(history))
    b.start(context(history))
    return [c.key for c in _drain(a, 16)] == [c.key for c in _drain(b, 16)]


def test_first_generation_probes_each_knob_of_the_best_history_candidate():
    history = toy_history([*NEAR, *FAR])
    space = toy_space()
    s = GuidedGA(probe=3)
    s.start(context(history))
    expected = candidate_configs(rank_history(history, space, TOY_TARGET), space, 13)
    assert s.from_history == 13
    first = _drain(s, 16)
    assert [c.key for c in first[:13]] == [c.key for c, _ in expected]
    assert _probes_of(space, first[13:], first[0], s.genes)
    probed = [s.genes[p.key][0] for p in first[13:]]
    assert len(probed) == 3 and len(set(probed)) == 3  # one probe per knob
    assert len({c.key for c in first}) == 16


def test_seeding_by_tasks_takes_the_best_candidate_of_each_task_in_turn():
    history = toy_history([*NEAR, *FAR])
    space = toy_space()
    by_metric = [c for c, _ in candidate_configs(rank_history(history, space, TOY_TARGET), space, 6)]
    s = GuidedGA(probe=0, population=6, elite=2, seeding="tasks")
    s.start(context(history))
    first = _drain(s, 6)
    expected = candidate_configs(interleave_tasks(rank_history(history, space, TOY_TARGET)),
                                 space, 6)
    assert [c.key for c in first] == [c.key for c, _ in expected]
    sources = [rec.task for _, rec in expected]
    assert set(sources[:3]) == {*NEAR, *FAR}  # one seed from each of the three tasks first
    assert [c.key for c in first] != [c.key for c in by_metric]


def _conv(name: str, r: int, stride: int, c: int = 64) -> Task:
    return Task.create("conv2d", {"N": 1, "C": c, "H": 28, "W": 28, "K": 128, "R": r, "S": r,
                                  "stride": stride, "pad": r // 2}, name=name)


def test_seeding_by_kin_takes_the_candidates_of_tasks_of_the_same_kernel_and_stride_first():
    from tests.plugins.gga.test_reproduce_script import conv_latency, conv_space

    me, k1, k3 = _conv("in", 1, 2), _conv("k1", 1, 2, c=32), _conv("k3", 3, 2)
    rng = random.Random(0)

    def results(task: Task, speed: float) -> list[MeasureResult]:
        space = conv_space(task)
        return [MeasureResult(c, MeasureStatus.OK, (conv_latency(task, c) / speed,))
                for c in (space.sample(rng) for _ in range(20))]

    # the 3x3 task's records run twice as fast: by metric alone they come first
    history = FakeHistory({k3: results(k3, 2.0), k1: results(k1, 1.0)})
    space = conv_space(me)
    ranked = rank_history(history, space, TOY_TARGET)
    assert ranked[0].task == k3
    picks = {}
    for seeding in ("metric", "kin"):
        s = GuidedGA(probe=0, population=4, elite=2, seeding=seeding)
        s.start(SearchContext(me, TOY_TARGET, space, 0, None, (), history=history))
        picks[seeding] = [c.key for c in _drain(s, 4)]
    kin = candidate_configs(kin_first(ranked, me), space, 4)
    assert picks["kin"] == [c.key for c, _ in kin]
    assert {rec.task for _, rec in kin} == {k1}  # 20 records of k1: all four seeds from it
    assert picks["metric"] == [c.key for c, _ in candidate_configs(ranked, space, 4)]
    assert picks["metric"] != picks["kin"]


def test_unknown_seeding_is_a_one_line_error():
    with pytest.raises(OptionError, match="^searcher 'gga': option seeding must be one of metric, "
                                          "tasks, kin, got 'random'$"):
        GuidedGA(seeding="random")


def test_probe_must_leave_room_for_a_history_candidate():
    with pytest.raises(OptionError,
                       match=r"^searcher 'gga': option probe must be within \[0, 7\], got 8$"):
        GuidedGA(population=8, probe=8)


def _drain(searcher, count: int, measurer=None) -> list[Config]:
    """``count`` proposals, asked for in batches as the loop does (the first generation
    starts with a short lead batch); each batch is measured when ``measurer`` is given."""
    out: list[Config] = []
    while len(out) < count:
        batch = searcher.propose(count - len(out))
        if not batch:
            break
        if measurer is not None:
            searcher.tell(measurer.measure(toy_space(), TOY_TARGET, batch))
        out += batch
    return out


def _run(searcher, generations: int, history=None, population: int = 16):
    measurer = ReplayMeasurer(results=toy_results(toy_space()))
    searcher.start(context(history))
    return [_drain(searcher, population, measurer) for _ in range(generations)]


def test_the_first_batch_is_a_lead_of_the_best_candidates_in_the_same_order():
    history = toy_history([*NEAR, *FAR])
    orders = {}
    for lead in (0, 1, 3):
        s = GuidedGA(lead=lead, lead_seeding="metric")
        s.start(context(history))
        first = s.propose(8)
        assert len(first) == (8 if lead == 0 else lead)
        orders[lead] = [c.key for c in first + _drain(s, 16 - len(first))]
    best = candidate_configs(rank_history(history, toy_space(), TOY_TARGET), toy_space(), 1)
    assert orders[1][0] == best[0][0].key  # the config fallback would apply comes first
    assert orders[0] == orders[1] == orders[3]  # only the batching differs
    s = GuidedGA()
    s.start(context(history))
    assert len(s.propose(8)) == TOY_TARGET.cores  # by default, one round of builds


def test_lead_seeding_by_tasks_takes_the_lead_batch_one_from_each_task():
    history = toy_history([*NEAR, *FAR])
    space = toy_space()
    ranked = rank_history(history, space, TOY_TARGET)
    by_metric = [c.key for c, _ in candidate_configs(ranked, space, 8)]
    leaders = candidate_configs(interleave_tasks(ranked), space, 3)
    assert len({rec.task for _, rec in leaders}) == 3
    s = GuidedGA(lead=3, lead_seeding="tasks")
    s.start(context(history))
    lead = s.propose(8)
    assert [c.key for c in lead] == [c.key for c, _ in leaders]  # one from each task
    assert lead[0].key == by_metric[0]  # the best candidate still comes first
    rest = [c.key for c in _drain(s, 16 - len(lead))]
    # the rest of the candidates keep the metric order, as many of them as before
    cands = [c.key for c in lead] + rest[:5]
    assert cands == [c.key for c, _ in leaders] + [k for k in by_metric
                                                     if k not in cands[:3]][:5]
    assert s.from_history == 8
    plain = GuidedGA(lead=3, lead_seeding="metric")  # the paper's order
    plain.start(context(history))
    assert [c.key for c in plain.propose(8)] == by_metric[:3]
    default = GuidedGA(lead=3)
    default.start(context(history))
    assert [c.key for c in default.propose(8)] == [c.key for c in lead]  # tasks by default


def test_lead_seeding_changes_nothing_without_a_lead_of_two_or_more():
    history = toy_history([*NEAR, *FAR])
    orders = {}
    for seeding in ("metric", "tasks"):
        s = GuidedGA(lead=1, lead_seeding=seeding)
        s.start(context(history))
        orders[seeding] = [c.key for c in _drain(s, 16)]
    assert orders["metric"] == orders["tasks"]
    with pytest.raises(OptionError, match="^searcher 'gga': option lead_seeding must be one of "
                                          "metric, tasks, kin, got 'spread'$"):
        GuidedGA(lead_seeding="spread")


def test_lead_tasks_spreads_the_first_candidates_over_tasks_past_a_lead_of_one():
    history = toy_history([*NEAR, *FAR])
    orders, firsts = {}, {}
    for name, opts in {"lead3": {"lead": 3}, "lead1": {"lead": 1},
                       "lead1-tasks3": {"lead": 1, "lead_tasks": 3}}.items():
        s = GuidedGA(**opts)
        s.start(context(history))
        firsts[name] = s.propose(8)
        orders[name] = [c.key for c in firsts[name] + _drain(s, 16 - len(firsts[name]))]
    assert len(firsts["lead1-tasks3"]) == 1 and len(firsts["lead3"]) == 3
    # a lead of three's order, its three leaders from three tasks, after the first alone
    assert orders["lead1-tasks3"] == orders["lead3"]
    assert orders["lead1"][:3] != orders["lead3"][:3]  # a lead of one alone: by metric
    assert orders["lead1"][0] == orders["lead3"][0]  # the best candidate first either way
    plain = GuidedGA(lead=2, lead_tasks=1)  # one task: the metric order
    plain.start(context(history))
    metric = GuidedGA(lead=2, lead_seeding="metric")
    metric.start(context(history))
    assert [c.key for c in plain.propose(8)] == [c.key for c in metric.propose(8)]
    with pytest.raises(OptionError,
                       match="^searcher 'gga': option lead_tasks must be >= 1, got 0$"):
        GuidedGA(lead_tasks=0)


def test_lead_seeding_kin_hands_the_last_lead_slot_to_a_task_of_the_same_structure(monkeypatch):
    history = toy_history([*NEAR, *FAR])
    leads = {}
    for seeding in ("tasks", "kin"):
        s = GuidedGA(lead=3, lead_seeding=seeding)
        s.start(context(history))
        leads[seeding] = [c.key for c in s.propose(8)]
    assert leads["kin"] == leads["tasks"]  # dense tasks have no structure: all are kin

    import plugins.gga.searcher as searcher
    calls = []
    swap = next(c for c in toy_space() if c.key not in leads["tasks"])

    def last_swapped(leaders, scored, space, task, skip=()):
        calls.append(([c.key for c, _ in leaders], task))
        return [*leaders[:-1], (swap, leaders[-1][1])]

    monkeypatch.setattr(searcher, "with_kin_leader", last_swapped)
    s = GuidedGA(lead=3, lead_seeding="kin")
    s.start(context(history))
    assert calls == [(leads["tasks"], TOY_TASK)]
    assert [c.key for c in s.propose(8)] == [*leads["tasks"][:2], swap.key]
    assert s.from_history == 8  # the first generation as long as before


def test_negative_lead_is_a_one_line_error():
    with pytest.raises(OptionError, match="^searcher 'gga': option lead must be >= 0, got -1$"):
        GuidedGA(lead=-1)


def test_children_come_from_guided_operators_only():
    s = GuidedGA()
    gens = _run(s, 4, toy_history(NEAR))
    for gen in gens[1:]:
        assert len(gen) == 16
        assert all(c.key in s.genes for c in gen)  # every child has its changed gene recorded
    assert s.generations == 3
    s.propose(1)  # breeds generation 5 from everything measured
    assert s.elite_genes  # genes of the top individuals guide later mutations
    top = sorted(s.perf, key=lambda k: (-s.perf[k], k))[:s.elite]
    # The gene that made each top child, or every knob value of a top seed.
    carried = {s.genes[k] if k in s.genes else item for k in top
               for item in ([s.genes[k]] if k in s.genes else s.configs[k].values)}
    for name, values in s.elite_genes.items():
        assert all((name, v) in carried for v in values)


def test_a_rejected_guided_child_keeps_its_gene_and_one_other_knob_is_repaired():
    s = GuidedGA()
    s.start(context(None))
    space = toy_space()
    parent = Config.of({"tile_m": (1, 4, 16), "tile_n": (2, 2, 16), "tile_k": (8, 8),
                        "unroll": 16})
    assert space.validate(parent) is None
    child = Config.of({**parent.to_dict(), "tile_m": (1, 1, 64)})  # 64 x 16 > 256: rejected
    assert space.validate(child) is not None
    out: list[Config] = []
    assert s._accept(child, ("tile_m", (1, 1, 64)), out)
    (made,) = out
    assert made["tile_m"] == (1, 1, 64) and space.validate(made) is None
    assert [k.name for k in space.knobs if made[k.name] != child[k.name]] == ["tile_n"]
    assert s.genes[made.key] == ("tile_m", (1, 1, 64))
    # A sample (no gene) the check rejects is not repaired, and nothing is accepted twice.
    assert not s._accept(child, None, out) and not s._accept(made, ("tile_m", (1, 1, 64)), out)


def test_elite_genes_come_from_the_best_seeds_before_any_child_beats_them():
    s = GuidedGA(probe=0)
    gens = _run(s, 1, toy_history(NEAR))
    assert not s.genes  # the first generation is all history seeds
    s.propose(1)  # breeds generation 2
    best = min(gens[0], key=toy_latency)
    assert all(value in s.elite_genes[name] for name, value in best.values)


def test_gga_improves_on_its_history_candidates():
    s = GuidedGA()
    gens = _run(s, 5, toy_history(NEAR))
    best_first = min(toy_latency(c) for c in gens[0])
    best_later = min(toy_latency(c) for g in gens[1:] for c in g)
    assert best_later <= best_first


def test_without_history_the_first_generation_is_sampled_and_search_goes_on():
    s = GuidedGA()
    gens = _run(s, 3, None)
    assert s.from_history == 0
    assert all(len(g) == 16 for g in gens)
    keys = [c.key for g in gens for c in g]
    assert len(keys) == len(set(keys))


def test_the_no_history_message_names_what_the_first_generation_is(caplog):
    caplog.set_level("INFO", logger="plugins.gga.searcher")
    GuidedGA().start(context(None))
    assert "first generation is samples of the space" in caplog.text
    caplog.clear()
    # This task's own earlier results fill the whole population: nothing is sampled, and
    # history of other tasks is not even looked up, so nothing is said about it.
    prior = tuple(toy_results(toy_space(), n=40, seed=3))
    GuidedGA().start(context(None, prior=prior))
    assert "no usable history" not in caplog.text
    GuidedGA(population=64).start(context(None, prior=prior))
    assert "this task's earlier results, probes of the best" in caplog.text


def test_probe_defaults_to_half_the_population():
    assert GuidedGA().probe == 8 and GuidedGA(population=6).probe == 3
    assert GuidedGA(population=6, probe=0).probe == 0


class _WorseAfter:
    """Measures the first ``n`` configs at 1 ms and every later one at 2 ms: no child
    ever beats the first generation, so the search stalls."""

    def __init__(self, n: int) -> None:
        self.n, self.seen = n, 0

    def measure(self, space, target, configs):
        out = []
        for c in configs:
            self.seen += 1
            out.append(MeasureResult(c, MeasureStatus.OK, (1e-3 if self.seen <= self.n else 2e-3,)))
        return out


def test_a_stalled_search_takes_fresh_history_candidates_from_every_task_in_turn():
    history = toy_history([*NEAR, *FAR])
    space = toy_space()
    s = GuidedGA(refresh=2)
    s.start(context(history))
    measurer = _WorseAfter(16)
    gens = [_drain(s, 16, measurer) for _ in range(4)]
    before = {c.key for g in gens[:3] for c in g}
    adapted = {c.key: rec.task for c, rec in candidate_configs(
        interleave_tasks(rank_history(history, space, TOY_TARGET)), space, 1000)}
    # generation 2 and 3 bred nothing better: generation 4 starts with 8 fresh seeds
    fresh = gens[3][:8]
    assert all(c.key in adapted and c.key not in before and c.key not in s.genes for c in fresh)
    assert {adapted[c.key] for c in fresh} == {*NEAR, *FAR}  # not all from one task
    assert all(c.key in s.genes for c in gens[3][8:])  # the other half is bred
    assert not any(c.key in adapted and c.key not in s.genes for c in gens[1] + gens[2])


def test_a_stalled_search_is_handed_to_the_tl_tuner_told_every_result():
    from plugins.tl.searcher import TransferSearcher

    history = toy_history([*NEAR, *FAR])
    s = GuidedGA(handoff=2)
    s.start(context(history))
    measurer = _WorseAfter(16)
    # generation 1 holds the best; generations 2 and 3 breed nothing better
    gga_made = [c for _ in range(3) for c in _drain(s, 16, measurer)]
    assert s.handed is None and s.generations == 2
    after = _drain(s, 16, measurer)
    assert isinstance(s.handed, TransferSearcher) and s.generations == 3
    assert len(after) == 16 and not {c.key for c in after} & {c.key for c in gga_made}
    assert all(toy_space().validate(c) is None for c in after)
    # the tuner learned from gga's 48 results and from its own 16, and fitted on them
    assert len(s.handed.own) == 64 and s.handed.fits >= 1 and len(s.handed.hist_x) > 0
    assert len(s.own) == 64  # gga keeps counting what was measured


def test_handoff_to_xgb_hands_the_search_to_a_tuner_fitted_on_gga_results_only():
    from plugins.tl.searcher import XGBSearcher

    s = GuidedGA(handoff=2, handoff_to="xgb")
    s.start(context(toy_history([*NEAR, *FAR])))
    measurer = _WorseAfter(16)
    gga_made = [c for _ in range(3) for c in _drain(s, 16, measurer)]
    after = _drain(s, 16, measurer)
    assert type(s.handed) is XGBSearcher and not s.handed.uses_history
    # fitted at the handoff on gga's 48 results, then again at 64 (xgb alone: once, at 64)
    assert s.handed.fits == 2 and s.handed.model.fitted
    assert len(s.handed.own) == 64 and not {c.key for c in after} & {c.key for c in gga_made}
    for bad in ("xgboost", "", None):
        with pytest.raises(OptionError, match="option handoff_to must be one of tl, xgb"):
            GuidedGA(handoff_to=bad)


def test_handoff_is_off_by_default_and_must_be_a_whole_number():
    assert GuidedGA().handoff == 0
    s = GuidedGA()
    s.start(context(toy_history([*NEAR, *FAR])))
    for _ in range(4):
        _drain(s, 16, _WorseAfter(16))
    assert s.handed is None  # off: a stalled search stays gga's
    for bad in (-1, 1.5, "two", True):
        with pytest.raises(OptionError, match="option handoff (takes a whole number|must be >= 0)"):
            GuidedGA(handoff=bad)
    assert GuidedGA(handoff="2").handoff == 2


def test_refresh_is_off_by_default_and_must_be_a_whole_number():
    assert GuidedGA().refresh == 0
    for bad in (-1, 1.5, "two", True):
        with pytest.raises(OptionError, match="option refresh (takes a whole number|must be >= 0)"):
            GuidedGA(refresh=bad)


def test_screen_is_off_by_default_and_must_be_a_whole_number():
    assert GuidedGA().screen == 0
    for bad in (-1, 2.5, "four", True):
        with pytest.raises(OptionError, match="option screen (takes a whole number|must be >= 0)"):
            GuidedGA(screen=bad)


def test_screened_first_generation_keeps_the_best_candidate_then_the_models_best():
    history = toy_history([*NEAR, *FAR])
    space = toy_space()
    s = GuidedGA(screen=3, probe=4)
    s.start(context(history))
    first = _drain(s, 16)
    pool = [c for c, _ in candidate_configs(rank_history(history, space, TOY_TARGET), space,
                                            1 + 11 * 3)]
    screen = ChildScreen(space, rank_history(history, space, TOY_TARGET), seed=0)
    screen.fit([])
    assert first[0].key == pool[0].key  # the config fallback would apply
    assert [c.key for c in first[1:12]] == [c.key for c in screen.best(pool[1:], 11)]
    for probe in first[12:]:  # each probe: the model's best value of its knob
        name, value = s.genes[probe.key]
        variants = [Config.of({**first[0].to_dict(), name: v})
                    for v in expertise_values(space.knob(name), first[0][name])]
        fresh = [c for c in variants if c.key not in {p.key for p in first[:12]}]
        assert probe.key == screen.best(fresh, 1)[0].key


def test_screen_proposes_plain_ggas_lead_batch_before_its_model_is_fitted(monkeypatch):
    fits: list[int] = []
    real_fit = ChildScreen.fit

    def spy(self, own):
        fits.append(len(own))
        real_fit(self, own)

    monkeypatch.setattr(ChildScreen, "fit", spy)
    history = toy_history([*NEAR, *FAR])
    plain = GuidedGA(lead=3)
    plain.start(context(history))
    s = GuidedGA(lead=3, screen=4)
    s.start(context(history))
    lead = s.propose(8)
    assert [c.key for c in lead] == [c.key for c in plain.propose(8)]
    assert fits == []  # nothing ranked, encoded or fitted before the lead batch
    measurer = ReplayMeasurer(results=toy_results(toy_space()))
    s.tell(measurer.measure(toy_space(), TOY_TARGET, lead))
    rest = _drain(s, 13)
    assert fits == [3]  # the rest of the first generation: a model that knows the lead's
    keys = [c.key for c in lead + rest]
    assert len(keys) == len(set(keys)) == 16 and s.from_history == 8
    one_task = toy_history([NEAR[0]])  # fewer tasks than the lead: filled by metric
    plain, s = GuidedGA(lead=3), GuidedGA(lead=3, screen=4)
    plain.start(context(one_task))
    s.start(context(one_task))
    lead = s.propose(8)
    assert [c.key for c in lead] == [c.key for c in plain.propose(8)] and len(lead) == 3
    for leads in ({"lead": 0}, {"lead": 3, "lead_seeding": "metric"},  # needs the model
                  {"lead": 1, "lead_tasks": 2},  # the spread is not the lead batch
                  {"lead": 3, "lead_tasks": 1}):
        fits.clear()
        eager = GuidedGA(screen=4, **leads)
        eager.start(context(history))
        assert fits == [0]


def _screen_training(monkeypatch) -> list[list[tuple[str, str]]]:
    """Every ``ChildScreen`` built from here on appends the (task, config) keys of the
    history records it learns from, in order, to the list returned."""
    trained: list[list[tuple[str, str]]] = []
    real_init = ChildScreen.__init__

    def spy(self, space, records, seed, params=None):
        trained.append([(h.task.key, h.result.config.key) for h in records])
        real_init(self, space, records, seed, params)

    monkeypatch.setattr(ChildScreen, "__init__", spy)
    return trained


def test_screen_rows_trains_the_screen_on_the_best_metric_records_without_reading_all(
        monkeypatch):
    history = toy_history([*NEAR, *FAR])
    ranked = rank_history(history, toy_space(), TOY_TARGET)
    trained = _screen_training(monkeypatch)
    measurer = ReplayMeasurer(results=toy_results(toy_space()))
    firsts = {}
    for rows in (0, len(ranked), 20):
        if rows == 20:  # from here on, reading every record fails
            monkeypatch.setattr("plugins.gga.searcher.rank_history", _no_full_ranking)
        s = GuidedGA(screen=4, screen_rows=rows)
        s.start(context(history))
        firsts[rows] = [c.key for c in _drain(s, 16, measurer)]
        assert len(firsts[rows]) == len(set(firsts[rows])) == 16
    whole = [(h.task.key, h.result.config.key) for h in ranked]
    assert trained == [whole, whole, whole[:20]]
    assert firsts[len(ranked)] == firsts[0]  # a cap above the history changes nothing
    for bad in (-1, 2.5, "many"):
        with pytest.raises(OptionError, match="option screen_rows"):
            GuidedGA(screen=4, screen_rows=bad)


def test_screen_rows_from_spread_trains_the_screen_on_every_tasks_spread_sample(
        monkeypatch):
    history = toy_history([*NEAR, *FAR])
    ranked = rank_history(history, toy_space(), TOY_TARGET)
    trained = _screen_training(monkeypatch)
    s = GuidedGA(screen=4, screen_rows=21, screen_rows_from="spread")
    s.start(context(history))
    firsts = [c.key for c in _drain(s, 16, ReplayMeasurer(results=toy_results(toy_space())))]
    assert len(firsts) == len(set(firsts)) == 16
    want = {(h.task.key, h.result.config.key) for h in spread_rows(ranked, 21)}
    assert [set(t) for t in trained] == [want]
    assert {t for t, _ in want} == {t.key for t in (*NEAR, *FAR)}
    by_metric = {(h.task.key, h.result.config.key) for h in ranked[:21]}
    assert want != by_metric
    with pytest.raises(OptionError, match="option screen_rows_from"):
        GuidedGA(screen=4, screen_rows=21, screen_rows_from="best")


def _no_full_ranking(*args, **kwargs):
    raise AssertionError("every history record was ranked")


def test_screen_measures_the_models_best_of_k_times_the_children(monkeypatch):
    seen_pools: list[tuple[int, int]] = []
    real_best = ChildScreen.best

    def spy(self, configs, count):
        kept = real_best(self, configs, count)
        seen_pools.append((len(configs), len(kept)))
        assert [c.key for c in kept] == [c.key for c in real_best(self, configs, len(configs))][:count]
        return kept

    monkeypatch.setattr(ChildScreen, "best", spy)
    s = GuidedGA(screen=4)
    gens = _run(s, 3, toy_history(NEAR))
    bred = [pool for pool in seen_pools if pool[1] == 16]
    assert len(bred) == 2 and all(n == 64 for n, _ in bred)  # generations 2 and 3
    keys = [c.key for g in gens for c in g]
    assert len(keys) == len(set(keys)) == 48
    assert all(c.key in s.genes for g in gens[1:] for c in g)  # still guided children only
    assert len(s.seen) == 48  # the children not kept are forgotten


def test_child_screen_learns_this_tasks_results():
    space = toy_space()
    screen = ChildScreen(space, [], seed=0)
    own = toy_results(space, n=80, seed=1)
    screen.fit(own)
    assert screen.ready
    others = [c for c in space if c.key not in {r.config.key for r in own}]
    top = screen.best(others, 10)
    median = sorted(toy_latency(c) for c in others)[len(others) // 2]
    assert max(toy_latency(c) for c in top) < median


def test_a_confirmed_timing_replaces_the_lucky_first_one_in_ranking():
    for confirmed in (True, False):
        s = GuidedGA(confirmed=confirmed)
        _run(s, 1, toy_history(NEAR))
        fluke = max(s.perf, key=s.perf.get)  # the best individual, by its first timing
        slower = MeasureResult(s.configs[fluke], MeasureStatus.OK,
                               (2.0 / s.perf[fluke],), measurer="replay")
        s.tell_confirmed([slower])
        s.propose(1)  # breeds generation 2 from the figures it holds
        if confirmed:  # timed again at half the speed: no longer the best, nor elite
            assert s.perf[fluke] == pytest.approx(performance(slower))
            assert max(s.perf, key=s.perf.get) != fluke
        else:
            assert max(s.perf, key=s.perf.get) == fluke
    with pytest.raises(OptionError, match="option confirmed must be true or false"):
        GuidedGA(confirmed="maybe")


def test_random_mutation_sets_one_knob_to_any_other_of_its_choices():
    space = toy_space()
    reached: dict[str, set] = {}
    rng = random.Random(0)
    for _ in range(3000):
        child, (name, value) = mutate_random(rng, A, space)
        changed = [k.name for k in space.knobs if child[k.name] != A[k.name]]
        assert changed == [name] and child[name] == value
        reached.setdefault(name, set()).add(value)
    for knob in space.knobs:  # every other choice of every knob can be drawn
        assert reached[knob.name] == set(knob.choices) - {A[knob.name]}
    # Expertise reaches only some of them in one move; random mutation is not guided.
    tile_m = next(k for k in space.knobs if k.name == "tile_m")
    assert set(expertise_values(tile_m, A["tile_m"])) < reached["tile_m"]


def test_explore_is_off_by_default_and_must_be_a_share():
    assert GuidedGA().explore == 0.0
    for bad in (-0.1, 1.5, "some", True):
        with pytest.raises(OptionError, match=r"option explore (takes a number|must be within \[0.0, 1.0\])"):
            GuidedGA(explore=bad)


def test_explore_makes_that_share_of_children_by_random_mutation(monkeypatch):
    import plugins.gga.searcher as searcher_module

    made: list = []

    def spy(rng, parent, space):
        out = mutate_random(rng, parent, space)
        made.append(out[0].key)
        return out

    monkeypatch.setattr(searcher_module, "mutate_random", spy)
    counts = {}
    for explore in (0.0, 0.25, 1.0):
        made.clear()
        s = GuidedGA(explore=explore)
        children = [c for g in _run(s, 6, toy_history(NEAR))[1:] for c in g]
        assert all(c.key in s.genes for c in children)  # a gene recorded, as for any child
        counts[explore] = sum(c.key in made for c in children) / len(children)
    # explore is the share of breeding attempts; guided attempts more often repeat a
    # measured config and are discarded, so random children are a larger share of those
    # kept. Children the check rejected were repaired around their gene (other keys).
    assert counts[0.0] == 0 and 0.25 <= counts[0.25] < 0.6 and counts[1.0] > 0.8
    # explore=0 is the paper's GGA: the proposals do not depend on the option existing.
    assert [c.key for g in _run(GuidedGA(explore=0.0), 4, toy_history(NEAR)) for c in g] == \
        [c.key for g in _run(GuidedGA(), 4, toy_history(NEAR)) for c in g]


def test_climb_makes_one_knob_variants_of_the_best_so_far_in_every_generation():
    s = GuidedGA(climb=4)
    s.start(context(toy_history([*NEAR, *FAR])))
    measurer = ReplayMeasurer(results=toy_results(toy_space()))
    _drain(s, 16, measurer)
    best = s.configs[min(s.perf, key=s._rank_key)]
    climbed = _drain(s, 16, measurer)[:4]
    changed = [[k.name for k in toy_space().knobs if c[k.name] != best[k.name]] for c in climbed]
    assert all(len(names) == 1 for names in changed)  # one knob of the best each
    assert len({names[0] for names in changed}) == 4  # each on another knob
    assert GuidedGA().climb == 0
    for bad in (-1, 1.5, "two", True, 17):
        with pytest.raises(OptionError,
                           match=r"option climb (takes a whole number|must be within \[0, 16\])"):
            GuidedGA(climb=bad)


def test_immigrants_are_samples_of_the_space_in_every_generation_after_the_first():
    history = toy_history([*NEAR, *FAR])
    searcher, bred = GuidedGA(immigrants=4), GuidedGA()
    generations, plain = _run(searcher, 4, history), _run(bred, 4, history)
    # the first generation as before
    assert [c.key for c in generations[0]] == [c.key for c in plain[0]]
    for generation in generations[1:]:
        # an immigrant has no gene: no operator made it; the bred children after it do
        assert [c.key in searcher.genes for c in generation] == [False] * 4 + [True] * 12
        assert all(toy_space().validate(c) is None for c in generation[:4])
    keys = [c.key for g in generations for c in g]
    assert len(set(keys)) == len(keys)  # nothing measured twice
    assert all(c.key in bred.genes for g in plain[1:] for c in g)
    assert GuidedGA().immigrants == 0
    for bad in (-1, 1.5, "two", True, 17):
        with pytest.raises(OptionError, match=r"option immigrants (takes a whole number|"
                                              r"must be within \[0, 16\])"):
            GuidedGA(immigrants=bad)


def test_probe_order_agreed_probes_the_knobs_every_candidate_shares_first():
    # every history record unrolls by 16: the candidates agree on unroll, nothing else
    full = toy_history([*NEAR, *FAR])
    history = FakeHistory({t: [r for r in full.results(t) if r.config["unroll"] == 16]
                           for t in full.tasks()})
    plain = GuidedGA(probe=3)
    plain.start(context(history))
    cands = _drain(plain, 16)[:plain.from_history]
    assert len(cands) == 13 and {c["unroll"] for c in cands} == {16}
    s = GuidedGA(probe=3, probe_order="agreed")
    s.start(context(history))
    first = _drain(s, 16)
    probes = [c for c in first if c.key in s.genes]
    assert [s.genes[p.key][0] for p in probes][0] == "unroll"  # the agreed knob first
    assert len(probes) == 3 and len({s.genes[p.key][0] for p in probes}) == 3
    # the best candidate, then the agreed knob's probe, then the other candidates in
    # their order, then the other probes
    assert first[0].key == cands[0].key and first[1].key == probes[0].key
    assert [c.key for c in first[2:14]] == [c.key for c in cands[1:]]
    assert [c.key for c in first[14:]] == [p.key for p in probes[1:]]


def test_probe_order_is_checked_and_random_keeps_the_first_generation():
    with pytest.raises(OptionError, match="option probe_order must be one of random, agreed"):
        GuidedGA(probe_order="first")
    assert _same_first_generation(probe_order="random")


def test_probe_from_measured_probes_the_fastest_candidate_measured_before_them():
    history = toy_history([*NEAR, *FAR])
    space = toy_space()
    plain, s = GuidedGA(probe=4, lead=2), GuidedGA(probe=4, lead=2, probe_from="measured")
    plain.start(context(history))
    s.start(context(history))
    seeded = _drain(plain, 16)

    def latency(c: Config) -> float:  # the best-metric seed runs slowly on this task
        return toy_latency(c) * (10.0 if c.key == seeded[0].key else 1.0)

    first: list[Config] = []
    while len(first) < 16:
        batch = s.propose(2)
        s.tell([MeasureResult(c, MeasureStatus.OK, (latency(c),)) for c in batch])
        first += batch
    assert len({c.key for c in first}) == 16
    assert [c.key for c in first[:12]] == [c.key for c in seeded[:12]]  # the same candidates
    fastest = min(first[:12], key=latency)
    assert fastest.key != seeded[0].key
    probes = first[12:]
    assert all(p.key in s.genes for p in probes) and len({s.genes[p.key][0] for p in probes}) == 4
    assert _probes_of(space, probes, fastest, s.genes)
    assert _probes_of(space, seeded[12:], seeded[0], plain.genes)
    assert set(s.generation) == {c.key for c in first}  # the next parents are drawn from them


def test_probe_from_measured_probes_the_seed_when_nothing_is_measured_yet():
    history = toy_history([*NEAR, *FAR])
    space = toy_space()
    s = GuidedGA(probe=4, lead=0, probe_from="measured")
    s.start(context(history))
    first = s.propose(16)  # the whole generation at once: no result to go by
    assert len({c.key for c in first}) == 16
    assert _probes_of(space, first[12:], first[0], s.genes)


def test_probe_from_is_checked_and_seed_keeps_the_first_generation():
    with pytest.raises(OptionError, match="^searcher 'gga': option probe_from must be one of "
                                          "seed, measured, got 'best'$"):
        GuidedGA(probe_from="best")
    assert _same_first_generation(probe_from="seed")


class TestGGAProbeFromMeasuredConformance(SearcherConformance):
    def create_searcher(self):
        return GuidedGA(probe_from="measured")
