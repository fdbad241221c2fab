"""The shell every engine repeats: one bundle, its params, the model built of them.

An engine says three things: what its bundle's ``params`` are (a type the
config reader reads, or its own ``read_params``), which graphs those params
make it run (the declaration its ``load`` and ``bundle verify`` both check,
``bundles.needs``) and how it builds its model from the bundle, the params and
the graphs.  :class:`EngineBase` does the rest of the
``Engine`` protocol's bookkeeping (registry.py): ``requirements``, ``load``
(the bundle is for this engine, the graphs are what it runs), holding bundle
and model, refusing calls before ``load``, forgetting both at ``close``.  An
engine adds ``voices``, ``capabilities``, ``warmup`` and its task's calls
(tts.py, asr.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from daemon.config.reader import read
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.bundles.needs import GraphNeeds, require
from daemon.sdk.capabilities import Task, VoiceInfo
from daemon.sdk.graphs import Runner
from daemon.sdk.license import License

#: an engine's params (what it reads of ``Bundle.params``)
P = TypeVar("P")
#: what it builds at ``load``
M = TypeVar("M")


class EngineBase(ABC, Generic[P, M]):
    """One loaded bundle of an engine; subclasses set ``engine_id`` and ``task``."""

    #: manifest ``engine`` value this class serves, e.g. ``"piper-vits"``
    engine_id: ClassVar[str]
    #: the job it does (the registry lists engines by it)
    task: ClassVar[Task]
    #: what ``read_params`` reads ``bundle.params`` as (daemon/config/reader.py)
    params_type: ClassVar[type[Any]]
    #: the graphs its params make it run (``graph_needs``), a staticmethod
    needs: ClassVar[Callable[[Any], GraphNeeds]]
    #: terms its user must accept before it loads (license.py); None: none
    license: ClassVar[License | None] = None

    def __init__(self) -> None:
        self._bundle: Bundle | None = None
        self._model: M | None = None

    # --- what an engine says --------------------------------------------------
    @classmethod
    def read_params(cls, bundle: Bundle) -> P:
        """``bundle.params`` read and checked; a BundleError names the field."""
        where = f"{bundle.root}: params"
        params: P = read(bundle.params, cls.params_type, where=where, error=BundleError)
        return params

    @classmethod
    def graph_needs(cls, params: P, graphs: Mapping[str, Any]) -> GraphNeeds:
        """Every graph ``load`` runs, with the tensors and shapes it uses:
        ``needs(params)``.  ``graphs`` are the manifest's ``GraphSpec``s
        (``requirements``) or the runners (``load``); an engine whose needs
        depend on a graph's I/O overrides this and reads it there."""
        return cls.needs(params)

    @abstractmethod
    def build(self, bundle: Bundle, params: P, graphs: Mapping[str, Runner]) -> M:
        """The model of a bundle whose graphs are checked: CPU tables, drivers."""

    # --- the protocol's bookkeeping -----------------------------------------
    @classmethod
    def requirements(cls, bundle: Bundle) -> GraphNeeds:
        return cls.graph_needs(cls.read_params(bundle), bundle.graphs)

    def load(self, bundle: Bundle, graphs: Mapping[str, Runner]) -> None:
        if bundle.engine != self.engine_id:
            raise BundleError(
                f"{bundle.root}: engine {bundle.engine!r}, not {self.engine_id!r}"
            )
        params = self.read_params(bundle)
        require(self.graph_needs(params, graphs), graphs)  # what `bundle verify` checks
        self._model = self.build(bundle, params, graphs)
        self._bundle = bundle

    @property
    def bundle(self) -> Bundle:
        """The loaded bundle (RuntimeError before ``load``)."""
        self._refuse_unloaded()
        assert self._bundle is not None
        return self._bundle

    @property
    def model(self) -> M:
        """What ``build`` made of the loaded bundle (RuntimeError before ``load``)."""
        self._refuse_unloaded()
        assert self._model is not None
        return self._model

    def voice(
        self,
        description: str,
        attribution: tuple[str, str],
        name: str | None = None,
        languages: Sequence[str] | None = None,
    ) -> VoiceInfo:
        """A voice of the loaded bundle: by default named as the bundle and
        speaking its manifest's languages."""
        b = self.bundle
        return VoiceInfo(
            name=b.name if name is None else name,
            languages=tuple(b.languages if languages is None else languages),
            description=description,
            attribution=attribution,
        )

    def close(self) -> None:
        self._model = None
        self._bundle = None

    def _refuse_unloaded(self) -> None:
        if self._model is None or self._bundle is None:
            raise RuntimeError(f"{self.engine_id} engine: load() a bundle first")
