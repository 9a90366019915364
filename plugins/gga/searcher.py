"""The ``gga`` searcher: guided genetic algorithm over history candidates (Algorithm 1)."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from history.ranking import RankedHistory
from history.similarity import (
    DEFAULT_OMEGA,
    ScoredRecord,
    candidate_configs,
    interleave_tasks,
    iter_candidates,
    kin_first,
    rank_history,
    repair,
    task_leaders,
    with_kin_leader,
)
from orchestrator.components import SearchContext
from orchestrator.options import as_bool, number, one_of, owner_name, whole
from orchestrator.result import MeasureResult
from orchestrator.space import Config
from plugins.gga.operators import (
    Gene,
    crossover,
    expertise_values,
    mutate_elite,
    mutate_expertise,
    mutate_random,
    pick_rank_proportional,
    select_proportional,
)
from plugins.gga.screen import ChildScreen, spread_rows

log = logging.getLogger(__name__)

# Breeding attempts per wanted child before the generation is filled another way.
_ATTEMPTS_PER_CHILD = 30
_MAX_SAMPLE_MISSES = 500
SEEDINGS = ("metric", "tasks", "kin")
LEAD_SEEDINGS = ("metric", "tasks", "kin")
PROBE_ORDERS = ("random", "agreed")
PROBE_FROM = ("seed", "measured")
HANDOFF_TUNERS = ("tl", "xgb")
SCREEN_ROWS_FROM = ("metric", "spread")


def performance(result: MeasureResult) -> float:
    """Fitness of a result: calls per second (0 for a failure)."""
    return 1.0 / result.latency if result.ok else 0.0


class GuidedGA:
    """Guided GA (Mu et al., Algorithm 1): starts from the history records with the best
    filtering metric (eq. 2) adapted to this task, then breeds by guided crossover and
    guided mutation only (elite genes, or expertise: divisors of the loop extent plus
    2 and 4). Each generation of ``population`` configs is measured; the next parents are
    drawn proportional to performance with the best individuals always kept.

    Without usable history (no history reader, no successful record of the same operator,
    or none that adapts to a valid config of this space) it still works: the first
    generation is completed with this task's own earlier results and configs sampled from
    the space. When the guided operators only produce configs already measured, the
    generation is filled with samples of the space too, so the loop's budget is spent.

    A child the space's check rejects keeps its guided gene and is repaired by the
    smallest change of one other knob the check accepts (``history.similarity.repair``).

    The first generation is not all history: after the best ``P - probe`` candidates come
    ``probe`` expertise mutations of the best one, each on another knob. History of other
    shapes agrees on the values that suited those shapes (every seed may share a padding
    or a register tile that is wrong for this one); one probe per knob finds out in the
    first generation which of them this task wants otherwise.

    Options: ``population`` (P, 16), ``elite`` (k, 8), ``crossover_prob`` (0.5: share of
    children made by crossover, the rest by mutation), ``elite_mutation_prob`` (0.5: share
    of mutations that use an elite gene when there is one), ``omega`` (2, eq. 2),
    ``probe`` (P // 2, so 8: one-knob variants of the best seed in the first generation;
    0 = the paper's first generation of history candidates only), ``seeding``
    (``metric``: the candidates with the best filtering metric, as in the paper;
    ``tasks``: the best candidate of each earlier task in turn, tasks ordered by their
    best metric, so that one task whose records all score highest does not supply
    every seed; ``kin``: the candidates of tasks with this task's structure, such as
    a convolution's kernel size and stride, first, each part by filtering metric; the
    match score cannot tell them apart, see ``history.similarity.kin_first``. Not in
    the paper), ``refit`` (False: an expertise mutation of a split knob only takes a
    factor that divides the extent beside the other inner factors; True: it may take any
    such factor, and the other inner factors are refitted around it, see
    ``operators.refit_split``), ``swap`` (False: off; True: an expertise mutation of a
    split knob may also exchange two of its factors, the outer one included, see
    ``operators.swapped_splits``; not in the paper: a tile of 7 under one of 8 is two
    or three moves from 8 under 7 otherwise, through configs the space may reject),
    ``refresh`` (0: off; N: after N generations in a row
    whose children did not beat the best so far, half of the next generation is fresh
    history candidates, records of the earlier tasks in turn that no generation has held
    yet, so that genes the first seeds lack can enter by crossover; see
    ``_fresh_candidates``), ``lead`` (the number of configs in the first batch of
    the first generation: by default the target's core count, one round of parallel
    builds; 0 = no lead batch). The best history candidate is the config ``fallback``
    would apply; proposing it and the next few alone, before the rest of the generation,
    makes their results known as soon as ``fallback``'s would be, instead of after a
    whole batch. Under ``lead_seeding=metric`` the configs and their order are the same
    whatever the lead; by default the lead also says how many tasks it draws from.
    ``lead_tasks`` (default: the lead; N: under ``lead_seeding`` tasks or kin, the first N
    history candidates are taken one from each of the N best-scoring tasks, whatever the
    lead, so that ``lead=1,lead_tasks=2`` measures the best candidate alone and the second
    task's best in the next batch, where the default lead of two measures both at once).
    Not in the paper.
    ``lead_seeding`` ("tasks": the lead batch is the best candidate of each of the
    best-scoring earlier tasks, one config a task, the best candidate first, and the rest
    of the first generation keeps the metric order; "kin": the same, but unless one of
    those tasks has this task's structure (a convolution's kernel size, stride and
    dilation: ``history.similarity.kin_first``), the last config of the lead batch is the
    best candidate of the best-scoring task that has it; "metric": the best candidates by
    filtering metric, the paper's order). Not in the paper. The match score compares loop
    extents only, so the records that score highest can all come from a task whose
    configs suit this one poorly (a 3x3 convolution of stride 2 seeding one of stride 1);
    a lead batch spread over tasks hedges that before the first result, at the cost of
    one candidate of the best task per extra task (measured in ``docs/results/gga.md``,
    "The lead batch spread over tasks"). ``screen`` (0: off;
    K: breed K times the children a generation needs and measure those a rank model
    ranks highest, see ``plugins.gga.screen``; the first generation likewise takes the
    best-metric candidate and the model's best of the next K x (P - probe - 1), and each
    probe the model's best value of its knob; the lead batch, which needs no model under
    ``lead_seeding`` tasks or kin, is proposed before the model is fitted, and the rest of
    the first generation is screened by a model that knows its results). Not in the
    paper. ``screen_rows`` (0: the screen's model learns from every history record of the
    operator; N: from the N records with the best filtering metric, which the lazy
    ranking finds without reading the rest, so that the screen's cost at the first
    generation and at every fit does not grow with the history; a model that sees only
    the fastest records of the closest tasks screens worse: on the simulated Xeon
    ``screen=4`` was 1.57x sooner than gga with 2000 rows, 2.10x with every record, see
    ``docs/results/gga.md``, "``screen=4`` on a third seed"). ``screen_rows_from``
    ("metric": those N records; "spread": N records shared equally among the earlier
    tasks, each task's share spread evenly over its records from the fastest down, see
    ``plugins.gga.screen.spread_rows``; every record is read and scored, only the model
    is smaller). Not in the paper. ``confirmed`` (True: under
    ``tune --confirm``, a config the loop timed again counts at its confirmed speed, see
    :meth:`tell_confirmed`; False: at its first timing, as before). The paper's tuner
    takes every timing at its word; a fast fluke then stays the best individual, is kept
    in every generation and lends its genes to the elite. ``explore`` (0.0: off, as the
    paper's GGA; p: the share of breeding attempts made by random mutation, one knob of
    a rank-picked parent set to any other of its choices, instead of crossover or guided
    mutation; guided attempts more often repeat a measured config, so the share of
    children kept is higher). Not in the paper: the guided operators only recombine and
    nudge the values the seeds carry, and a search whose seeds share a poor basin stays
    in it. ``handoff`` (0: off; N: after N generations in a row whose children did not
    beat the best so far, the rest of the search is the ``tl`` tuner's, the paper's other
    method: its rank model trained on filtered history and on every result gga measured,
    its simulated annealing started from gga's best configs). Not in the paper, which
    runs one method or the other. A resumed run starts as gga again. ``handoff_to``
    ("tl": the tuner above; "xgb": AutoTVM's tuner without history, its model trained on
    gga's results only, for a history whose other tasks mislead the model). ``climb`` (0: off;
    N: every generation after the first, N of its children are one-knob expertise
    variants of the best config so far, each on another knob, as the first generation's
    probes are of the best seed: a hill climb beside the population). Not in the paper,
    whose children come from rank-picked parents: the best config is a parent of few of
    them, and the knob values next to it stay untried for generations. ``probe_order``
    ("random": the first generation's probes come after its history candidates, their
    knobs in random order; "agreed": the probes of the knobs on which every history
    candidate of the first generation holds the same value come first, and they are
    measured between the candidates, from the second config on). Not in the paper. A knob
    the candidates disagree on is tried both ways by crossover; one they all agree on is
    tried only by its probe, and a value that suited every history shape can be wrong for
    this one (the padding of a 5x5 kernel on 16 channels, say), so its probe is worth
    measuring early. ``probe_from`` ("seed": the probes vary the best history candidate,
    chosen before anything is measured; "measured": they are made only when they are
    due, after the candidates before them, and vary the fastest config measured by then,
    the first probes under ``probe_order=agreed`` excepted). Not in the paper. The
    candidate with the best filtering metric is seldom the fastest of those measured
    before the probes (4 of 33 runs in ``docs/results/gga.md``, "Probes of the fastest
    measured config"), and probes of a slower config spend half the first generation
    around it. ``immigrants`` (0: off; N: every generation after the first, N of its
    children are configs sampled at random from the space, as a GA's random immigrants).
    Not in the paper, which has no random operator. Unlike ``explore``, which moves one
    knob of a parent, an immigrant carries values on every knob that no seed may hold;
    crossover can pass them on only where an immigrant is fast enough to be picked.
    Slower than gga on the simulated Xeon (``docs/results/gga.md``, "Random immigrants
    and screened children").
    """

    def __init__(self, population: int = 16, elite: int = 8, crossover_prob: float = 0.5,
                 elite_mutation_prob: float = 0.5, omega: float = DEFAULT_OMEGA,
                 probe: int | None = None, seeding: str = "metric",
                 refit: bool = False, lead: int | None = None, refresh: int = 0,
                 screen: int = 0, confirmed: bool = True, explore: float = 0.0,
                 handoff: int = 0, climb: int = 0, handoff_to: str = "tl",
                 probe_order: str = "random", lead_seeding: str = "tasks",
                 swap: bool = False, probe_from: str = "seed", immigrants: int = 0,
                 screen_rows: int = 0, screen_rows_from: str = "metric",
                 lead_tasks: int | None = None) -> None:
        owner = owner_name("searcher", "gga")
        self.population_size = whole(owner, "population", population, 2)
        self.elite = whole(owner, "elite", elite, 1)
        self.probe = (self.population_size // 2 if probe is None
                      else whole(owner, "probe", probe, 0, self.population_size - 1))
        self.crossover_prob = number(owner, "crossover_prob", crossover_prob, 0.0, 1.0)
        self.elite_mutation_prob = number(owner, "elite_mutation_prob", elite_mutation_prob,
                                          0.0, 1.0)
        self.explore = number(owner, "explore", explore, 0.0, 1.0)
        self.omega = number(owner, "omega", omega, 0.0)
        self.seeding = one_of(owner, "seeding", seeding, SEEDINGS)
        self.probe_order = one_of(owner, "probe_order", probe_order, PROBE_ORDERS)
        self.probe_from = one_of(owner, "probe_from", probe_from, PROBE_FROM)
        self.lead_seeding = one_of(owner, "lead_seeding", lead_seeding, LEAD_SEEDINGS)
        self.refit = as_bool(owner, "refit", refit)
        self.swap = as_bool(owner, "swap", swap)
        self.confirmed = as_bool(owner, "confirmed", confirmed)
        self.lead = None if lead is None else whole(owner, "lead", lead, 0)
        self.lead_tasks = (None if lead_tasks is None
                           else whole(owner, "lead_tasks", lead_tasks, 1))
        self.refresh = whole(owner, "refresh", refresh, 0)
        self.handoff = whole(owner, "handoff", handoff, 0)
        self.handoff_to = one_of(owner, "handoff_to", handoff_to, HANDOFF_TUNERS)
        self.climb = whole(owner, "climb", climb, 0, self.population_size)
        self.immigrants = whole(owner, "immigrants", immigrants, 0, self.population_size)
        self.screen = whole(owner, "screen", screen, 0)
        self.screen_rows = whole(owner, "screen_rows", screen_rows, 0)
        self.screen_rows_from = one_of(owner, "screen_rows_from", screen_rows_from,
                                       SCREEN_ROWS_FROM)

    # -- Searcher protocol -------------------------------------------------------------
    def start(self, context: SearchContext) -> None:
        """Pick the first generation: this task's best earlier results, then history
        candidates by filtering metric, then one-knob probes of the best of them, then
        samples of the space."""
        self.space = context.space
        self.rng = random.Random(context.seed)
        self._context = context
        self.handed: Any = None  # the tuner the search was handed to (``handoff``)
        self.perf: dict[str, float] = {}
        self.configs: dict[str, Config] = {}
        self.seen: set[str] = set()
        self.genes: dict[str, Gene] = {}  # individual -> the gene that made it
        self.elite_genes: dict[str, list[Any]] = {}
        self.generations = 0
        self.own: list[MeasureResult] = []
        for r in context.prior:
            self._learn(r)
        known = sorted((k for k in self.perf if self.perf[k] > 0), key=self._rank_key)
        known = known[:self.population_size]
        want = self.population_size - len(known)
        self._best_perf = max(self.perf.values(), default=0.0)
        self._stalled = 0
        self._screen: ChildScreen | None = None
        self._reserve: Iterator[Config] = iter(())
        self._ranked: RankedHistory | None = None
        lead = max(1, context.target.cores) if self.lead is None else self.lead
        leaders = self._early_leaders(want, lead)
        # under ``screen`` the lead batch goes out before the rank model is fitted (the
        # ranking of every record, encoding and fit take ~0.4 s on a ResNet-18 history);
        # the rest of the first generation is made when it is due, in ``propose``
        self._rest_due: tuple[list[str], int, int, list[Config]] | None = None
        self._probes_due = 0
        if leaders:
            self.seen.update(c.key for c in leaders)
            self.generation: list[str] = known + [c.key for c in leaders]
            self.pending: list[Config] = leaders
            self._lead = 0
            self._rest_due = (known, want, lead, leaders)
            return
        self._first_generation(known, want, lead, [])

    def _early_leaders(self, want: int, lead: int) -> list[Config]:
        """Under ``screen``: the lead batch as plain gga makes it (``_spread_lead`` over the
        best candidates by metric: one config from each of the best-scoring tasks, then
        the best others where the history has fewer tasks than the lead), which needs no
        rank model; [] where the lead needs the model, the spread over tasks is not the
        lead batch (``lead_tasks``) or the first generation is made at once."""
        n_cands = want - self._probe_count(want)
        if (not self.screen or n_cands < 2 or lead < 1 or self.seeding == "kin"
                or (lead > 1 and self.lead_seeding == "metric")
                or self._spread_count(lead) != lead):
            return []
        self._ranked = RankedHistory(self._context.history, self.space,
                                     self._context.target, self.omega)
        count = min(lead, n_cands)
        cands = [c for c, _ in candidate_configs(self._ranked, self.space, count,
                                                 skip=self.seen)]
        return self._spread_lead(self._ranked, cands, count)

    def _spread_count(self, lead: int) -> int:
        """How many of the first candidates come one from each task: ``lead_tasks``, or
        else the lead."""
        return lead if self.lead_tasks is None else self.lead_tasks

    def _probe_count(self, want: int) -> int:
        """The first generation's probes when it wants ``want`` configs: ``probe``, leaving
        room for one history candidate."""
        return min(self.probe, want - 1) if want > 1 else 0

    def _first_generation(self, known: list[str], want: int, lead: int,
                          given: list[Config]) -> None:
        """Make the first generation: after ``known`` (this task's best earlier results),
        ``given`` (a lead batch already proposed) or else the lead batch, history
        candidates (screened under ``screen``), probes and samples of the space."""
        context = self._context
        n_probe = self._probe_count(want)
        # The metric seeding takes a few of the best-metric records: the lazy ranking then
        # reads only the records that can rank among them (history.ranking), as does the
        # screen's model under ``screen_rows`` by metric. The other options read every
        # record.
        spread = self.screen_rows_from == "spread"
        everything = want > 0 and bool(self.refresh or self.seeding != "metric"
                                       or (self.screen and (spread or not self.screen_rows)))
        full = (rank_history(context.history, self.space, context.target, self.omega)
                if everything else [])
        lazy = None
        if want and not everything:  # the lead batch's lazy ranking read on, if it has one
            lazy = self._ranked if self._ranked is not None else RankedHistory(
                context.history, self.space, context.target, self.omega)
        self._ranked = None
        train: list[ScoredRecord] = full  # what the screen learns from, by metric
        if self.screen and self.screen_rows:
            train = (spread_rows(full, self.screen_rows) if spread else
                     list(itertools.islice(full if lazy is None else lazy, self.screen_rows)))
        self._reserve = self._fresh_candidates(full) if self.refresh else iter(())
        if self.seeding == "tasks":
            full = interleave_tasks(full)
        elif self.seeding == "kin":
            full = kin_first(full, self.space.task)
        scored: Iterable[ScoredRecord] = full if lazy is None else lazy
        self._screen = (ChildScreen(self.space, train, context.seed)
                        if self.screen and train else None)
        head = 0 if given else 1  # the best-metric candidate is never screened out
        n_cands = want - n_probe - len(given)
        n_read = n_cands
        if self._screen is not None and n_cands > head:
            self._screen.fit(self.own)
            n_read = head + (n_cands - head) * self.screen
        cands = [c for c, _ in candidate_configs(scored, self.space, n_read, skip=self.seen)]
        if self._screen is not None:
            cands = cands[:head] + self._screen.best(cands[head:], n_cands - head)
        spread_n = self._spread_count(lead)
        if not given and self.lead_seeding != "metric" and spread_n > 1 and len(cands) > 1:
            cands = self._spread_lead(scored, cands, spread_n)
        cands = given + cands
        self.from_history = len(cands)
        if want and not cands:
            log.info("gga: no usable history of other tasks for %s; the first generation "
                     "is %s", context.task.label(),
                     "this task's earlier results, probes of the best and samples of the space"
                     if known else "samples of the space")
        self.seen.update(c.key for c in cands)
        best = self.configs[known[0]] if known else cands[0] if cands else None
        agreed = self._agreed_knobs(cands) if self.probe_order == "agreed" else []
        # under probe_from=measured only the agreed knobs' probes are made now: the
        # others wait for results (``_due_probes``)
        early = (len(agreed) if self.probe_from == "measured" and not known and cands
                 else n_probe)
        probes = (self._probe(best, min(early, n_probe), first_knobs=agreed)
                  if best is not None else [])
        self._probes_due = n_probe - len(probes) if early < n_probe else 0
        self._probe_seed = best  # what ``_due_probes`` varies while no result is ok
        first = self._order_first(cands, probes, agreed)
        first += self._fill(want - self._probes_due - len(first),
                            [self.configs[k] for k in known] + cands)
        self.generation = known + [c.key for c in first]
        proposed = {c.key for c in given}
        self.pending = [c for c in first if c.key not in proposed]
        self._lead = 0 if given else min(lead, len(first))

    def _spread_lead(self, scored: Iterable[ScoredRecord], cands: list[Config],
                     lead: int) -> list[Config]:
        """``cands`` with the lead batch's configs taken one from each earlier task (the
        best candidate of each, tasks by their best metric; under ``kin`` the last one
        from the best task of this task's structure unless a leader's task has it); the
        rest follow in their order, the list as long as before."""
        found = task_leaders(scored, self.space, lead, skip=self.seen)
        if self.lead_seeding == "kin" and lead > 1:
            found = with_kin_leader(found, scored, self.space, self.space.task, skip=self.seen)
        leaders = [c for c, _ in found]
        taken = {c.key for c in leaders}
        return (leaders + [c for c in cands if c.key not in taken])[:len(cands)]

    def propose(self, n: int) -> list[Config]:
        """The next ``n`` configs of the current generation (breeding a new one when it is
        all proposed); an empty list only when nothing new can be made."""
        if self.handed is None:
            if self._lead:
                n, self._lead = min(n, self._lead), 0
            if self._rest_due is not None and not self.pending:
                rest, self._rest_due = self._rest_due, None
                self._first_generation(*rest)
            if self._probes_due and len(self.pending) < n:
                self._due_probes()
            if not self.pending:
                self._evolve()
        if self.handed is not None:
            return self.handed.propose(n)
        out, self.pending = self.pending[:n], self.pending[n:]
        return out

    def _due_probes(self) -> None:
        """Under ``probe_from=measured``: the first generation's remaining probes, of the
        fastest config measured so far (the best history candidate while none is),
        added to it; expertise mutations of it where the probes run out."""
        count, self._probes_due = self._probes_due, 0
        best_key = min(self.perf, key=self._rank_key, default=None)
        best = (self.configs[best_key] if best_key is not None and self.perf[best_key] > 0
                else self._probe_seed)
        made = self._probe(best, count)
        made += self._fill(count - len(made), [best])
        self.generation += [c.key for c in made]
        self.pending += made

    def tell(self, results: Sequence[MeasureResult]) -> None:
        """Record the measured performance of the configs last proposed."""
        for r in results:
            self._learn(r)
        if self.handed is not None:
            self.handed.tell(results)

    def tell_confirmed(self, results: Sequence[MeasureResult]) -> None:
        """Under ``tune --confirm``: a config timed again counts at its confirmed speed,
        not at the first timing that was picked for being fast (unless ``confirmed`` is
        off). Elites, elite genes and selection all read these figures."""
        if not self.confirmed:
            return
        for r in results:
            if r.config.key in self.perf:
                self.perf[r.config.key] = performance(r)

    # -- Algorithm 1 -------------------------------------------------------------------
    def _learn(self, r: MeasureResult) -> None:
        key = r.config.key
        self.own.append(r)
        self.seen.add(key)
        self.configs[key] = r.config
        self.perf[key] = max(self.perf.get(key, 0.0), performance(r))

    def _rank_key(self, key: str) -> tuple[float, str]:
        return (-self.perf.get(key, 0.0), key)

    def _update_elite_genes(self) -> None:
        """EliteGenes: the genes that made the top-k individuals measured so far. An
        individual no operator made (a history seed, an earlier result, a sample) has no
        single gene of its own: each of its knob values counts as one, so that the best
        seeds pass their values on before any child beats them."""
        top = sorted(self.perf, key=self._rank_key)[:self.elite]
        elite: dict[str, list[Any]] = {}
        for key in top:
            if self.perf[key] <= 0:
                continue
            genes = [self.genes[key]] if key in self.genes else list(self.configs[key].values)
            for name, value in genes:
                if value not in elite.setdefault(name, []):
                    elite[name].append(value)
        self.elite_genes = elite

    def _evolve(self) -> None:
        measured = [k for k in self.generation if k in self.perf]
        if not self.perf:  # nothing measured at all (not even told): sample again
            self.pending = self._fill(self.population_size, [])
            self.generation = [c.key for c in self.pending]
            return
        self.generations += 1
        self._count_stall()
        if self.handoff and self._stalled >= self.handoff:
            self._hand_off()
            return
        self._update_elite_genes()
        best_all = min(self.perf, key=self._rank_key)
        keep = [best_all]
        if measured:
            best_child = min(measured, key=self._rank_key)
            if best_child != best_all:
                keep.append(best_child)
        pool = sorted(set(measured) | {best_all})
        parents = select_proportional(
            self.rng, [(self.configs[k], self.perf[k]) for k in pool], self.population_size,
            keep=[self.configs[k] for k in keep])
        ranked = sorted(parents, key=lambda c: self._rank_key(c.key))
        children = self._refreshed()
        children += self._probe(self.configs[best_all], self.climb - len(children))
        children += self._samples(min(self.immigrants, self.population_size - len(children)))
        children += self._screened(ranked, self.population_size - len(children))
        children += self._fill(self.population_size - len(children), ranked + children)
        self.generation = [c.key for c in children]
        self.pending = children

    def _accept(self, child: Config, gene: Gene | None, out: list[Config]) -> bool:
        if child.key in self.seen:
            return False
        if self.space.validate(child) is not None:
            # A guided gene the template rejects with the parent's other knobs (a larger
            # register tile, say) is kept, and the smallest change of another knob that
            # the template accepts is made with it: one guided move, two knobs changed.
            if gene is None:
                return False
            fixed = repair(child, self.space, fixed=(gene[0],), avoid=self.seen)
            if fixed is None:
                return False
            child = fixed
        self.seen.add(child.key)
        if gene is not None:
            self.genes[child.key] = gene
        out.append(child)
        return True

    def _breed(self, ranked: list[Config], count: int) -> list[Config]:
        """Guided crossover or guided mutation (or, with ``explore``, random mutation),
        child by child, until ``count`` new configs."""
        out: list[Config] = []
        for _ in range(count * _ATTEMPTS_PER_CHILD):
            if len(out) >= count:
                break
            made = None
            if self.explore and self.rng.random() < self.explore:
                made = mutate_random(self.rng, pick_rank_proportional(self.rng, ranked),
                                     self.space)
            elif len(ranked) >= 2 and self.rng.random() < self.crossover_prob:
                a = pick_rank_proportional(self.rng, ranked)
                b = pick_rank_proportional(self.rng, ranked)
                made = crossover(self.rng, a, b, self.space)
            else:
                parent = pick_rank_proportional(self.rng, ranked)
                if self.elite_genes and self.rng.random() < self.elite_mutation_prob:
                    made = mutate_elite(self.rng, parent, self.elite_genes)
                if made is None:
                    made = mutate_expertise(self.rng, parent, self.space, self.refit,
                                            self.swap)
            if made is not None:
                self._accept(*made, out)
        return out

    def _screened(self, ranked: list[Config], count: int) -> list[Config]:
        """``count`` children by :meth:`_breed`; with ``screen`` K, the model's best
        ``count`` of K x ``count`` bred (the others are forgotten, so that a later
        generation may breed them again)."""
        if self._screen is None or self.screen <= 1 or count <= 0:
            return self._breed(ranked, count)
        self._screen.fit(self.own)
        bred = self._breed(ranked, count * self.screen)
        kept = self._screen.best(bred, count)
        chosen = {c.key for c in kept}
        for c in bred:
            if c.key not in chosen:
                self.seen.discard(c.key)
                self.genes.pop(c.key, None)
        return kept

    def _count_stall(self) -> None:
        """Count the generations in a row that found nothing better than the best so far."""
        best = max(self.perf.values(), default=0.0)
        self._stalled = 0 if best > self._best_perf else self._stalled + 1
        self._best_perf = max(best, self._best_perf)

    def _hand_off(self) -> None:
        """Give the rest of the search to the ``handoff_to`` tuner, told every result so
        far."""
        from plugins.tl.searcher import TransferSearcher, XGBSearcher

        tuner = TransferSearcher() if self.handoff_to == "tl" else XGBSearcher()
        tuner.start(dataclasses.replace(self._context, prior=tuple(self.own)))
        tuner.fit_now()
        self.handed = tuner
        self.pending = []
        log.info("gga: no better config for %d generations; handing the search to %s after "
                 "%d results", self._stalled, self.handoff_to, len(self.own))

    def _refreshed(self) -> list[Config]:
        """Fresh history candidates for half the next generation once the search has
        stalled for ``refresh`` generations (none otherwise, or when history has none
        left)."""
        if not self.refresh or self._stalled < self.refresh:
            return []
        self._stalled = 0
        out: list[Config] = []
        for cfg in self._reserve:
            if cfg.key not in self.seen:
                self._accept(cfg, None, out)
                if len(out) >= self.population_size // 2:
                    break
        if out:
            log.info("gga: no better config for %d generations; %d fresh history candidates",
                     self.refresh, len(out))
        return out

    def _fresh_candidates(self, scored: Sequence[ScoredRecord]) -> Iterator[Config]:
        """History configs adapted to this space, lazily, one record of each earlier
        task in turn (tasks by their best filtering metric, each task's records by
        metric). The first generation's seeds often all come from the one task whose
        records score highest and share that task's values; a stalled search needs
        other values than those."""
        return (cfg for cfg, _ in iter_candidates(interleave_tasks(scored), self.space))

    def _agreed_knobs(self, cands: Sequence[Config]) -> list[str]:
        """The knobs on which every one of ``cands`` (two or more) holds the same value."""
        if len(cands) < 2:
            return []
        return [k.name for k in self.space.knobs
                if all(c[k.name] == cands[0][k.name] for c in cands[1:])]

    def _order_first(self, cands: list[Config], probes: list[Config],
                     agreed: Sequence[str]) -> list[Config]:
        """The first generation's order: the candidates, then the probes; with probes of
        ``agreed`` knobs, those alternate with the candidates after the first one."""
        # every probe is a guided child: its gene names the knob it probed
        early = [p for p in probes if self.genes[p.key][0] in agreed]
        if not early or not cands:
            return cands + probes
        late = [p for p in probes if self.genes[p.key][0] not in agreed]
        rest = cands[1:]
        mixed: list[Config] = [cands[0]]
        for i in range(max(len(early), len(rest))):
            mixed += early[i:i + 1] + rest[i:i + 1]
        return mixed + late

    def _probe(self, best: Config, count: int, first_knobs: Sequence[str] = ()) -> list[Config]:
        """Up to ``count`` expertise mutations of ``best``, each on a knob not yet probed
        (knobs in random order, those of ``first_knobs`` before the others; a second round
        of knobs if there are fewer knobs)."""
        out: list[Config] = []
        options = {k.name: expertise_values(k, best[k.name], self.refit, self.swap)
                   for k in self.space.knobs}
        names = [name for name, values in options.items() if values]
        for _ in range(2):
            self.rng.shuffle(names)
            names.sort(key=lambda name: name not in first_knobs)  # stable: random within
            for name in names:
                if len(out) >= count:
                    return out
                fresh = [(child, value) for value in options[name]
                         if (child := Config.of({**best.to_dict(), name: value})).key
                         not in self.seen]
                if fresh and self._screen is not None:
                    top = self._screen.best([c for c, _ in fresh], 1)[0]
                    self._accept(top, (name, top[name]), out)
                elif fresh:
                    child, value = self.rng.choice(fresh)
                    self._accept(child, (name, value), out)
        return out

    def _fill(self, count: int, parents: list[Config]) -> list[Config]:
        """``count`` new configs when history or breeding could not provide them:
        expertise mutations of ``parents`` first, then samples of the space."""
        out: list[Config] = []
        if count <= 0:
            return out
        for _ in range(count * _ATTEMPTS_PER_CHILD if parents else 0):
            if len(out) >= count:
                break
            made = mutate_expertise(self.rng, self.rng.choice(parents), self.space, self.refit,
                                    self.swap)
            if made is not None:
                self._accept(*made, out)
        return out + self._samples(count - len(out))

    def _samples(self, count: int) -> list[Config]:
        """Up to ``count`` configs sampled from the space that were not measured or
        proposed before."""
        out: list[Config] = []
        misses = 0
        while len(out) < count and misses < _MAX_SAMPLE_MISSES:
            cfg = self.space.sample(self.rng)
            if cfg is None or not self._accept(cfg, None, out):
                misses += 1
        return out
