"""Feature flags (KIP-584) as a one-node Kafka 4.4 cluster has them: what this broker
supports, what is finalized, and UpdateFeatures with Kafka's controller checks.

Each feature has a range of levels; a finalized level turns behaviour on across the
cluster (transaction.version=2: KIP-890 part 2; group.version=1: KIP-848 groups;
share.version>=1: share groups; streams.version=1: KIP-1071 streams groups). A new broker
finalizes Kafka 4.4's defaults (what ``kafka-storage format`` writes), or the levels of
``initial.feature.levels``; with log.dirs they are kept in the metadata store and an
upgrade or downgrade survives a restart. Engines and handlers ask ``finalized_level``.
Synchronous and without I/O of its own: ``store`` persists (storage/metadata.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import structlog

from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"
ELR_VERSION = "eligible.leader.replicas.version"


@dataclass(frozen=True)
class Feature:
    name: str
    min_level: int  # Kafka's minimumProduction
    max_level: int  # latestProduction: the highest this broker supports
    default: int  # what kafka-storage format finalizes on 4.4
    # level -> {feature: least level it needs} (Kafka's FeatureVersion.dependencies)
    depends: dict


# Kafka 4.4.0's production features, read from its server-common jar (Feature, MetadataVersion)
FEATURES = {f.name: f for f in (
    Feature(METADATA_VERSION, 7, 33, 33, {}),  # 3.3-IV3 .. 4.4-IV2
    Feature(KRAFT_VERSION, 0, 1, 1, {}),
    Feature(TRANSACTION_VERSION, 0, 2, 2, {}),
    Feature(GROUP_VERSION, 0, 1, 1, {}),
    Feature(ELR_VERSION, 0, 1, 1, {1: {METADATA_VERSION: 23}}),
    Feature(SHARE_VERSION, 0, 2, 2, {}),
    Feature(STREAMS_VERSION, 0, 1, 1, {}),
)}
# the order a Kafka 4.4 broker lists them in ApiVersions (its maps' iteration order)
SUPPORTED_ORDER = (GROUP_VERSION, KRAFT_VERSION, METADATA_VERSION, SHARE_VERSION, STREAMS_VERSION,
                   TRANSACTION_VERSION, ELR_VERSION)
FINALIZED_ORDER = (GROUP_VERSION, KRAFT_VERSION, SHARE_VERSION, METADATA_VERSION, STREAMS_VERSION,
                   TRANSACTION_VERSION, ELR_VERSION)
# metadata.version levels whose records changed (MetadataVersion.didMetadataChange): a
# downgrade across one would lose metadata, and Kafka refuses it
METADATA_CHANGED = frozenset({7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33})
# the release name of each metadata.version level, for messages and the docs
METADATA_NAMES = dict(zip(range(7, 34), (
    "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
    "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0",
    "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1", "4.3-IV0",
    "4.4-IV0", "4.4-IV1", "4.4-IV2")))

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3  # UpdateFeatures' UpgradeType
CONTROLLER = "Local controller"


def parse_levels(text: str) -> dict[str, int]:
    """``initial.feature.levels``: "name=level,..." checked against what is supported."""
    levels: dict[str, int] = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in FEATURES:
            raise ValueError(f"{item!r}: expected feature=level with a feature of {sorted(FEATURES)}")
        level = int(value)
        feature = FEATURES[name]
        low = feature.min_level if name == METADATA_VERSION else 0
        if not low <= level <= feature.max_level:
            raise ValueError(f"{name}={level}: supported levels are {low}-{feature.max_level}")
        levels[name] = level
    return levels


class _NoStore:
    features: dict = {}
    features_epoch = 0

    def put_features(self, levels, epoch): pass


# What a kipper cluster's nodes support below Kafka 4.4's levels (docs/CLUSTER.md): nothing now.
# Transaction version 2 came once a partition's leader could add it to a transaction another
# broker coordinates (AddPartitionsToTxn v4+ between brokers, broker/txn_verifier.py)
CLUSTER_CEILINGS: dict[str, int] = {}


class Features:
    def __init__(self, initial: dict[str, int] | None = None, store=None, node_id: int = 1,
                 ceilings: dict[str, int] | None = None):
        """``store`` (storage/metadata.py's MetadataStore) holds the finalized levels of a
        broker with log.dirs; when it holds none, the defaults with ``initial`` over them
        are finalized and written. ``ceilings``: the highest level this node supports of a
        feature, below Kafka 4.4's (a cluster's nodes: ``CLUSTER_CEILINGS``)."""
        self.store = store or _NoStore()
        self.node_id = node_id
        ceilings = ceilings or {}
        self.features = {name: replace(f, max_level=min(f.max_level, ceilings[name]),
                                       default=min(f.default, ceilings[name])) if name in ceilings else f
                         for name, f in FEATURES.items()}
        for name, level in (initial or {}).items():
            if level > self.features[name].max_level:
                raise ValueError(f"{name}={level}: supported levels are 0-{self.features[name].max_level}")
        if self.store.features:
            self._levels = {k: int(v) for k, v in self.store.features.items()}
            for name, f in self.features.items():  # (stored before this node's ceiling was lowered)
                if self._levels.get(name, 0) > f.max_level:
                    self._levels[name] = f.max_level
            self.epoch = int(self.store.features_epoch)
        else:
            self._levels = {name: f.default for name, f in self.features.items()}
            self._levels.update(initial or {})
            self.epoch = 1
            self.store.put_features(dict(self._levels), self.epoch)
        self.updates = 0

    # --- the questions engines and handlers ask -------------------------------------------

    def finalized_level(self, name: str) -> int:
        """The finalized level of ``name``; 0 (off) when not finalized or unknown."""
        return self._levels.get(name, 0)

    def supported(self, *, omit_min_zero: bool = False) -> list[dict]:
        """ApiVersions' SupportedFeatures; ``omit_min_zero`` for requests below v4, which
        Kafka answers without the features whose range starts at 0 (KAFKA-17492)."""
        out = []
        for name in SUPPORTED_ORDER:
            f = self.features[name]
            if omit_min_zero and f.min_level == 0:
                continue
            out.append({"name": name, "min_version": f.min_level, "max_version": f.max_level})
        return out

    def finalized(self) -> list[dict]:
        """ApiVersions' FinalizedFeatures: every feature above level 0."""
        return [{"name": n, "max_version_level": self._levels[n], "min_version_level": self._levels[n]}
                for n in FINALIZED_ORDER if self._levels.get(n, 0) > 0]

    def snapshot(self) -> dict:
        return {"finalized": {n: self._levels.get(n, 0) for n in SUPPORTED_ORDER},
                "epoch": self.epoch, "updates": self.updates}

    # --- UpdateFeatures ---------------------------------------------------------------------

    def update(self, updates: list[tuple[str, int, int]], validate_only: bool) -> tuple[ErrorCode, str | None]:
        """(name, level, upgrade type) of each update, as Kafka's FeatureControlManager
        checks them: the first refused one refuses all (INVALID_UPDATE_VERSION and its
        message); otherwise all are applied at once (unless ``validate_only``)."""
        proposed = dict(self._levels)
        proposed.update({name: level for name, level, _ in updates})
        for name, level, upgrade_type in updates:
            error = self._check(name, level, upgrade_type, proposed)
            if error is not None:
                return ErrorCode.INVALID_UPDATE_VERSION, error
        if validate_only or not updates:
            return ErrorCode.NONE, None
        before = dict(self._levels)
        for name, level, _ in updates:
            if name == KRAFT_VERSION:
                continue  # one voter: the kraft.version upgrade is a no-op here
            self._levels[name] = level
        self.epoch += 1
        self.updates += 1
        self.store.put_features(dict(self._levels), self.epoch)
        log.info("features_updated", before={k: before.get(k, 0) for k, _, _ in updates},
                 after={k: self._levels.get(k, 0) for k, _, _ in updates}, epoch=self.epoch)
        return ErrorCode.NONE, None

    def _check(self, name: str, level: int, upgrade_type: int, proposed: dict) -> str | None:
        reason = self._reason(name, level, upgrade_type, proposed)
        if reason is None or reason.startswith("Unsupported metadata.version"):
            return reason  # (Kafka words a metadata.version downgrade on its own)
        return f"Invalid update version {level} for feature {name}. {reason}"

    def _reason(self, name: str, level: int, upgrade_type: int, proposed: dict) -> str | None:
        if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return "The controller does not support the given upgrade type."
        current = self._levels.get(name, 0)
        if level < 0:
            return "A feature version cannot be less than 0."
        feature = self.features.get(name)
        low, high = (feature.min_level, feature.max_level) if feature is not None else (0, 0)
        if not low <= level <= high:
            what = f"{CONTROLLER} {self.node_id}"
            return (f"{what} does not support this feature." if high == 0
                    else f"{what} only supports versions {low}-{high}")
        if level < current and upgrade_type == UPGRADE:
            return ("Can't downgrade the version of this feature without setting the upgrade type "
                    "to either safe or unsafe downgrade.")
        if level > current and upgrade_type != UPGRADE:
            return "Can't downgrade to a newer version."
        if name == METADATA_VERSION:
            return self._check_metadata_version(current, level, upgrade_type)
        if name == KRAFT_VERSION:
            return None if upgrade_type == UPGRADE or level == current else "Can't downgrade the version of this feature."
        if feature is None:  # level 0 of a feature nobody knows
            return f"Feature {name} not found."
        if level >= 1 and proposed.get(METADATA_VERSION, 0) < FEATURES[METADATA_VERSION].min_level:
            return (f"{name} could not be set to {level} because it depends on metadata.version="
                    f"{FEATURES[METADATA_VERSION].min_level} (3.3-IV3)")
        for dependency, least in feature.depends.get(level, {}).items():
            if proposed.get(dependency, 0) < least:
                return f"{name} could not be set to {level} because it depends on {dependency} level {least}"
        return None

    @staticmethod
    def _check_metadata_version(current: int, level: int, upgrade_type: int) -> str | None:
        if level >= current:
            return None
        changed = any(v in METADATA_CHANGED for v in range(level + 1, current + 1))
        if not changed:
            return None
        head = f"Unsupported metadata.version downgrade from {current} to {level}."
        if upgrade_type == UNSAFE_DOWNGRADE:
            return f"{head} Unsafe metadata downgrade is not supported in this version."
        return f"{head} Refusing to perform the requested downgrade because it might delete metadata information."
