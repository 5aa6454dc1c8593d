"""ProducerIdQuotaManager (KIP-936): which new producer ids a user may start.

Per user (the principal's name) it keeps a TimedBloomFilter of the producer
ids it admitted recently, a token bucket and two sampled stats for metrics.
``check(user, producer_id, now)`` answers 0 (admit) or a throttle time in ms:

- no producer_ids_rate for the user and no default: admitted, nothing kept;
- the id is in one of the user's readable filters: admitted, no token taken;
- otherwise it is a new id: admitted if the bucket has a whole token (taken,
  and the id is put in the writable filter), else throttled.

``dispose(now)`` drops filters older than 1.5 windows and forgets users with
no readable filter whose bucket has refilled, so forgetting a user never
gives it more tokens than it would have had. The user's counts of admitted,
throttled and remembered ids are kept aside then and taken up again when the user
comes back, so they stay cumulative (a Prometheus counter never goes back).
Time is always an argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from kipper.broker.quota.bloom import TimedBloomFilter
from kipper.broker.quota.rate import SampledStat, TokenBucket

QUOTA_KEY = "producer_ids_rate"


@dataclass(frozen=True)
class QuotaSettings:
    samples: int = 11              # producer.id.quota.window.num (KIP-936 default)
    window_s: int = 3600           # producer.id.quota.window.size.seconds (KIP-936 default)
    expected_items: int = 10000
    false_positive_rate: float = 0.001

    @classmethod
    def from_config(cls, config) -> "QuotaSettings":
        return cls(config["producer.id.quota.window.num"],
                   config["producer.id.quota.window.size.seconds"],
                   config["producer.id.quota.bloom.filter.expected.items"],
                   config["producer.id.quota.bloom.filter.false.positive.rate"])

    @property
    def window_ms(self) -> int:
        return self.window_s * 1000

    def burst(self, rate: float) -> float:
        return rate * self.samples * self.window_s


class UserProducerIds:
    __slots__ = ("bloom", "bucket", "rate", "throttle", "admitted", "throttled", "remembered")

    def __init__(self, settings: QuotaSettings, burst: float, now: int):
        self.bloom = TimedBloomFilter(settings.window_ms, settings.expected_items,
                                      settings.false_positive_rate)
        self.bucket = TokenBucket(burst, now)
        self.rate = SampledStat(settings.samples, settings.window_ms)
        self.throttle = SampledStat(settings.samples, settings.window_ms)
        self.admitted = 0     # new ids admitted (tokens taken)
        self.throttled = 0    # new ids refused
        self.remembered = 0   # ids found in a filter (no token taken)


class ProducerIdQuotaManager:
    def __init__(self, settings: QuotaSettings | None = None):
        self.settings = settings or QuotaSettings()
        self.users: dict[str, UserProducerIds] = {}
        self.quotas: dict[str, float] = {}   # user -> producer_ids_rate
        self.default_quota: float | None = None
        self.disposed_filters = 0
        self.cleaned_users = 0
        self.retired: dict[str, tuple[int, int, int]] = {}  # counts of users forgotten meanwhile

    # --- quota values --------------------------------------------------------------------

    def set_quotas(self, per_user: dict[str, float], default: float | None) -> None:
        self.quotas = dict(per_user)
        self.default_quota = default

    @property
    def any_quota(self) -> bool:
        """Whether some user (or the default) has a producer-id rate at all."""
        return bool(self.quotas) or self.default_quota is not None

    def quota_for(self, user: str) -> float | None:
        q = self.quotas.get(user)
        return q if q is not None else self.default_quota

    # --- the check ------------------------------------------------------------------------

    def check(self, user: str, producer_id: int, now: int) -> int:
        rate = self.quota_for(user)
        if rate is None:
            return 0
        settings = self.settings
        burst = settings.burst(rate)
        u = self.users.get(user)
        if u is None:
            u = self.users[user] = UserProducerIds(settings, burst, now)
            if self.retired:
                u.admitted, u.throttled, u.remembered = self.retired.pop(user, (0, 0, 0))
        elif u.bloom.might_contain(producer_id, now):
            u.remembered += 1
            return 0
        wait = u.bucket.take(now, rate, burst)
        if wait:
            u.throttled += 1
            u.throttle.record(now, wait)
            return wait
        u.admitted += 1
        u.rate.record(now, 1)
        u.bloom.put(producer_id, now)
        return 0

    def might_contain(self, user: str, producer_id: int, now: int) -> bool:
        u = self.users.get(user)
        return u is not None and u.bloom.might_contain(producer_id, now)

    # --- periodic work (the shell calls this) ----------------------------------------------

    def dispose(self, now: int) -> tuple[int, int]:
        """Drop old filters and idle users; returns (filters disposed, users dropped)."""
        filters = users = 0
        for name in list(self.users):
            u = self.users[name]
            filters += u.bloom.dispose(now)
            rate = self.quota_for(name)
            full = rate is None or u.bucket.refill(now, rate, self.settings.burst(rate)) >= \
                self.settings.burst(rate)
            if not u.bloom.filters and full:
                del self.users[name]
                self.retired[name] = (u.admitted, u.throttled, u.remembered)
                users += 1
        self.disposed_filters += filters
        self.cleaned_users += users
        return filters, users

    # --- metrics ----------------------------------------------------------------------------

    def bloom_bytes(self) -> int:
        return sum(u.bloom.nbytes() for u in self.users.values())

    def snapshot(self, now: int) -> dict:
        users = {}
        for name, u in sorted(self.users.items()):
            rate = self.quota_for(name)
            tokens = u.bucket.refill(now, rate, self.settings.burst(rate)) if rate is not None else None
            users[name] = {
                "quota": rate,
                # KIP-936's metric names, group ProducerIds, tag user
                "ProducerIds": {"rate": round(u.rate.rate(now), 6), "tokens": tokens,
                                "throttle-time": round(u.throttle.avg(now), 3)},
                "admitted": u.admitted, "throttled": u.throttled, "remembered": u.remembered,
                "filters": len(u.bloom.filters), "bloom_bytes": u.bloom.nbytes(),
            }
        return {"users": users, "users_tracked": len(users), "bloom_bytes": self.bloom_bytes(),
                "disposed_filters": self.disposed_filters, "cleaned_users": self.cleaned_users,
                "default_quota": self.default_quota, "quotas": dict(sorted(self.quotas.items()))}
