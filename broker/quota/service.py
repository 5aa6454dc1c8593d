"""The quota engines wired into one broker: state, Produce and Fetch hooks, periodic work.

``ProducerIdQuotas(config, config_dir)`` builds the producer-id manager (seed 002), Kafka's
byte-rate managers (``produce``: producer_byte_rate, ``fetch``: consumer_byte_rate)
and the client-quota store (from config.dir; in memory on a cluster's node, whose
quotas are the metadata log's). The Produce handler calls ``admit`` per
partition and ``record_produce`` per request, the Fetch handler ``fetch_limit`` and
``record_fetch``; the client-quota handlers ``alter_client_quotas`` and
``describe_client_quotas``; the shell calls ``tick(now)`` (dispose, cleanup) and
``reload()`` (quotas.json edited by someone else).

The hook keeps known producer ids off the bloom filters: a connection
remembers the ids it was admitted with (``Session.admitted_producer_ids``),
so after its first batch a producer costs one set lookup per partition. A
producer id that already has producer state on the partition was admitted
before and is never throttled; only an id new to both goes to the manager.
"""

from __future__ import annotations

import structlog

from kipper.broker.quota.client_quota_manager import ClientQuotaManager, WindowSettings
from kipper.broker.quota.client_quotas import ClientQuotaStore, producer_id_rates
from kipper.broker.quota.entities import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE
from kipper.broker.quota.manager import ProducerIdQuotaManager, QuotaSettings

log = structlog.get_logger(__name__)

MAX_ADMITTED_PER_CONNECTION = 4096  # past this, ids go the slow (still correct) way


def user_of(principal: str) -> str:
    return principal[5:] if principal.startswith("User:") else principal


class ProducerIdQuotas:
    def __init__(self, config, config_dir: str | None = None):
        self.manager = ProducerIdQuotaManager(QuotaSettings.from_config(config))
        windows = WindowSettings.from_config(config)
        self.produce = ClientQuotaManager(PRODUCER_BYTE_RATE, windows)
        self.fetch = ClientQuotaManager(CONSUMER_BYTE_RATE, windows)
        # Kafka bounds only the request quota's throttle time: one window
        self.request = ClientQuotaManager(REQUEST_PERCENTAGE, windows, max_throttle_ms=windows.window_ms)
        self.store = ClientQuotaStore(config_dir, on_change=self._apply)
        self.cleanup_interval_ms = config["producer.id.quota.cache.cleanup.scheduler.interval.ms"]

    def _apply(self, quotas) -> None:
        per_user, default = producer_id_rates(quotas)
        self.manager.set_quotas(per_user, default)
        self.produce.set_quotas(quotas)
        self.fetch.set_quotas(quotas)
        self.request.set_quotas(quotas)

    # --- byte rates (Kafka's ClientQuotaManager) ----------------------------------------

    def request_quota_set(self) -> bool:
        return self.request.enabled

    def record_request(self, ctx, seconds: float, now: int) -> int:
        """Kafka's request quota: the time a request took, in percent of one second of one
        thread, against request_percentage; the throttle time in ms (0: within quota)."""
        return self.request.record(user_of(ctx.session.principal), ctx.client_id, seconds * 100.0, now)

    def produce_quota_set(self) -> bool:
        return self.produce.enabled

    def record_produce(self, ctx, nbytes: int, now: int) -> int:
        """Count a Produce request's bytes; its throttle time in ms (0: within quota)."""
        if not self.produce.enabled:
            return 0
        return self.produce.record(user_of(ctx.session.principal), ctx.client_id, nbytes, now)

    def fetch_limit(self, ctx) -> int | None:
        """The most a Fetch may return under the client's quota, None without one."""
        if not self.fetch.enabled:
            return None
        most = self.fetch.max_value_in_window(user_of(ctx.session.principal), ctx.client_id)
        return None if most is None else max(1, int(min(most, 0x7FFFFFFF)))

    def record_fetch(self, ctx, nbytes: int, now: int) -> int:
        """Count a Fetch response's bytes; the throttle time in ms (0: within quota). A
        throttled Fetch is answered empty, so its bytes are taken back, as in Kafka."""
        if not self.fetch.enabled:
            return 0
        user = user_of(ctx.session.principal)
        wait = self.fetch.record(user, ctx.client_id, nbytes, now)
        if wait:
            self.fetch.unrecord(user, ctx.client_id, nbytes, now)
        return wait

    # --- Produce hook -----------------------------------------------------------------

    def admit(self, session, partition, spans, now: int) -> int:
        """0 when every producer id in ``spans`` may write to ``partition`` (a Partition),
        else a throttle time in ms."""
        if not self.manager.any_quota:
            return 0  # no quota set: nothing to look up (every idempotent Produce asks)
        admitted = session.admitted_producer_ids
        for _, _, h in spans:
            pid = h.producer_id
            if pid < 0 or pid in admitted:
                continue
            wait = self._admit_new(session, partition, pid, now)
            if wait:
                return wait
        return 0

    def _admit_new(self, session, partition, pid: int, now: int) -> int:
        manager = self.manager
        user = user_of(session.principal)
        if manager.quota_for(user) is None:
            return 0
        psm = partition.producer_state_if_any
        if psm is None or psm.table.find(pid) < 0:
            wait = manager.check(user, pid, now)
            if wait:
                return wait
        if len(session.admitted_producer_ids) < MAX_ADMITTED_PER_CONNECTION:
            session.admitted_producer_ids.add(pid)
        return 0

    # --- client quotas (AlterClientQuotas, DescribeClientQuotas) -----------------------------

    def alter_client_quotas(self, changes) -> None:
        """Apply ``changes`` [(entity, [Op])] and save them (quotas.json)."""
        self.store.apply(changes)

    def describe_client_quotas(self, exact: dict, specified: set, strict: bool):
        """(entity, {key: value}) of the quotas a describe's filter matches."""
        return self.store.describe(exact, specified, strict)

    def forget_producers(self) -> None:
        """Every producer id seen is forgotten, as in a fresh broker; the quotas set stay
        (the embedded test broker's reset)."""
        self.manager = ProducerIdQuotaManager(self.manager.settings)
        self.manager.set_quotas(*producer_id_rates(self.store.quotas))

    def snapshot(self, now: int) -> dict:
        snap = self.manager.snapshot(now)
        snap["byte_rates"] = {"produce": self.produce.snapshot(now), "fetch": self.fetch.snapshot(now),
                              "request": self.request.snapshot(now)}
        return snap

    # --- periodic work ----------------------------------------------------------------------

    def tick(self, now: int) -> None:
        self.produce.dispose(now)
        self.fetch.dispose(now)
        self.request.dispose(now)
        filters, users = self.manager.dispose(now)
        if filters or users:
            log.debug("producer_id_quota_disposed", filters=filters, users=users)

    def reload(self) -> None:
        self.store.maybe_reload()

