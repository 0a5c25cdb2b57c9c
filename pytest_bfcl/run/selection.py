"""Which entries of the selected categories a run scores: every one, a stratified sample
(``--bfcl-sample``), per category the fewest entries whose comparison detects the drop asked
for (``--bfcl-detect``), or nested stages that the run asks one after another while the gate is
unsure (``--bfcl-sequential``)."""

from __future__ import annotations

from collections.abc import Callable

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.dataset.clusters import cluster_key, clusters_of
from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.dataset.index import CategoryIndex, DataIndex
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.gate import STAGES, plan
from pytest_bfcl.kinds import kind_of
from pytest_bfcl.run.sampling import nested_stages, sample_counts, stratified_sample
from pytest_bfcl.run.stage_seed import stage_seed
from pytest_bfcl.settings import Settings

ITEM_COST = 5  # an item's protocol and report, in answers checked (see Selection.scoring_cost)


class Selection:
    def __init__(self, settings: Settings, dataset: Dataset) -> None:
        self.settings = settings
        self.dataset = dataset
        self._entry_maps: dict[str, dict[str, Entry]] = {}
        self._sample: dict[str, set[str]] | None = None
        self._stages: list[dict[str, set[str]]] | None = None
        self._stage_seed: tuple[int, str] | None = None
        # Per category, the noise between two runs measured in the baseline (set by the
        # caller that loaded one): what --bfcl-detect plans with.
        self.plan_noise: dict[str, float] = {}
        # An xdist worker's collection, per category the ids the controller's selection gave
        # (the controller read and checked every file): the worker then reads a category only
        # when it scores one of its entries.
        self.given_ids: dict[str, list[str]] = {}
        # What the run needs of a category before it scores any entry, kept from an earlier
        # run (dataset/index.py): a category indexed is read when an entry is scored.
        self.index = DataIndex(dataset)
        self._weights: dict[str, dict[str, tuple[int, int]]] = {}  # an index's, per category

    def check(self, category: str) -> None:
        """Read and check the category's entries and ground truth, unless a valid index of
        them is kept (they were read and checked when it was made)."""
        if self.index.get(category) is None:
            self.index.make(category, self._derived)

    @staticmethod
    def _derived(entry: Entry) -> tuple[str, int, int]:
        return (cluster_key(entry, entry.category), *_weights_of(entry))

    def _indexed(self, category: str) -> CategoryIndex | None:
        """The category's index, while its data is not read (the data answers once it is)."""
        return None if self.dataset.loaded(category) else self.index.get(category)

    def all_ids(self, category: str) -> list[str]:
        """Every id of the category, in file order."""
        index = self._indexed(category)
        if index is not None:
            return index.ids
        return [e.id for e in self.dataset.entries(category)]

    def entries_for(self, category: str) -> list[Entry]:
        """The entries of a selected category that this run scores (all, or the sample)."""
        entries = self.dataset.entries(category)
        if not self.sampled:
            return entries
        chosen = self._chosen(category)
        return [e for e in entries if e.id in chosen]

    def _chosen(self, category: str) -> set[str]:
        if self._sample is None:
            ids = {c: self.all_ids(c) for c in self.settings.categories}
            if self.settings.sequential:  # every stage is asked or left out by the loop
                self._sample = {c: set(members) for c, members in ids.items()}
            elif self.settings.detect is not None:
                self._sample = sample_counts(ids, self.planned_sizes(), self.sample_seed)
            else:
                assert self.settings.sample is not None
                self._sample = stratified_sample(ids, self.settings.sample, self.sample_seed)
        return self._sample.get(category, set())

    def collected_ids(self, category: str) -> list[str]:
        """The ids of the entries collected for a selected category, in order."""
        given = self.given_ids.get(category)
        if given is not None:
            return given
        ids = self.all_ids(category)
        if not self.sampled:
            return ids
        chosen = self._chosen(category)
        return [i for i in ids if i in chosen]

    def collection(self) -> dict[str, list[str]]:
        """Per selected category, the ids collected for it (what a worker is given)."""
        return {c: self.collected_ids(c) for c in self.settings.categories}

    @property
    def sampled(self) -> bool:
        """Whether the run scores a sample of each category (--bfcl-sample, --bfcl-detect,
        --bfcl-sequential: each stage is one)."""
        settings = self.settings
        return settings.sample is not None or settings.detect is not None or settings.sequential

    @property
    def sample_seed(self) -> int:
        """The seed of --bfcl-sample and --bfcl-detect (0 unless --bfcl-seed is given)."""
        return 0 if self.settings.seed is None else self.settings.seed

    @property
    def stage_seed(self) -> tuple[int, str]:
        """``--bfcl-sequential``: the stages' seed and where it came from (--bfcl-seed, the
        commit under test, or this run), fixed once per run."""
        if self._stage_seed is None:
            self._stage_seed = stage_seed(self.settings.seed)
        return self._stage_seed

    def stages(self, ids: dict[str, list[str]] | None = None) -> list[dict[str, set[str]]]:
        """``--bfcl-sequential``: per stage, the entries of each category it holds (each stage
        those of the stages before it too), drawn with the stages' seed before anything is
        asked; over ``ids`` (the selection narrowed on the command line) when given."""
        if ids is not None:
            return nested_stages(ids, STAGES, self.stage_seed[0])
        if self._stages is None:
            ids = {c: self.all_ids(c) for c in self.settings.categories}
            self._stages = nested_stages(ids, STAGES, self.stage_seed[0])
        return self._stages

    def planned_sizes(self) -> dict[str, int]:
        """``--bfcl-detect``: per category, the fewest entries whose comparison detects the
        drop, with the noise the baseline measured (:attr:`plan_noise`) or the assumed one."""
        sizes = {c: len(self.all_ids(c)) for c in self.settings.categories}
        if self.settings.detect is None:
            return sizes
        gate = self.settings.gate
        return plan(sizes, self.settings.detect, self.plan_noise, gate.alpha, gate.min_drop)

    def sampled_populations(self) -> dict[str, int]:
        """For a sampled run, the size of each selected category (what its sample stands
        for); empty otherwise."""
        if not self.sampled:
            return {}
        return {c: len(self.all_ids(c)) for c in self.settings.categories}

    def expected_ids(self, skip_reason: Callable[[str], str | None]) -> dict[str, set[str]]:
        """Per category, the selected (and sampled) entries that the run's own options do not
        exclude (``skip_reason`` of an entry's category gives None; an indexed category's
        entries all say that category)."""
        expected: dict[str, set[str]] = {}
        for category in self.settings.categories:
            if self._indexed(category) is not None:
                kept = skip_reason(category) is None
                ids = set(self.collected_ids(category)) if kept else set()
            else:
                ids = {e.id for e in self.entries_for(category) if skip_reason(e.category) is None}
            if ids:
                expected[category] = ids
        return expected

    def clusters(self) -> dict[str, str]:
        """Entry id -> cluster, over the entries this run scores (for the intervals)."""
        clusters: dict[str, str] = {}
        for category in self.settings.categories:
            index = self._indexed(category)
            if index is None:
                clusters.update(clusters_of((category, e) for e in self.entries_for(category)))
                continue
            scored = set(self.collected_ids(category))
            pairs = zip(index.ids, index.clusters, strict=True)
            clusters.update((i, k) for i, k in pairs if i in scored)
        return clusters

    def expected_requests(self, entry_id: str) -> int:
        """The scheduler's rough count of the entry's requests (1 for an id this run does not
        know): what the entry weighs when entries are shared out between processes."""
        weights = self._entry_weights(entry_id)
        return 1 if weights is None else weights[0] * self.settings.samples

    def scoring_cost(self, entry_id: str) -> int:
        """The rough weight of an entry's item when its answers are stored (the model asks no
        server): its item's own pytest protocol and report, which weigh about as much as
        checking five answers (measured on a 4,441-entry replay), and its scoring."""
        weights = self._entry_weights(entry_id)
        return ITEM_COST + (1 if weights is None else weights[1] * self.settings.samples)

    def _entry_weights(self, entry_id: str) -> tuple[int, int] | None:
        """(requests, scoring cost) of an entry, from its category's index while that is not
        read; None for an id this run does not know."""
        category = category_of_id(entry_id)
        index = self._indexed(category)
        if index is not None:
            if category not in self._weights:
                self._weights[category] = index.weights()
            return self._weights[category].get(entry_id)
        try:
            return _weights_of(self.entry(entry_id))
        except (KeyError, DatasetError):
            return None

    def entry(self, entry_id: str) -> Entry:
        return self._entries_of(category_of_id(entry_id))[entry_id]

    def _entries_of(self, category: str) -> dict[str, Entry]:
        if category not in self._entry_maps:
            self._entry_maps[category] = self.dataset.entry_map(category)
        return self._entry_maps[category]


def _weights_of(entry: Entry) -> tuple[int, int]:
    """(requests, scoring cost) of an entry, as its kind counts them."""
    kind = kind_of(entry.category)
    return kind.requests(entry), kind.scoring_cost(entry)
