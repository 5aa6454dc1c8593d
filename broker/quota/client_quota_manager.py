"""ClientQuotaManager: Kafka's byte-rate (and request-time) quotas per client.

One manager per quota type (produce: producer_byte_rate, fetch: consumer_byte_rate,
request: request_percentage). A request's user and client id find their quota the way
Kafka's default quota callback does, most specific first:

  (user, client-id), (user, default client), user, (default user, client-id),
  (default user, default client), default user, client-id, default client

The entity found decides who shares a sensor: a user's quota is shared by all its
clients, a default quota is per user / per client (each gets the whole quota), as in
Kafka. A sensor is Kafka's sampled Rate (``quota.window.num`` samples of
``quota.window.size.seconds``); ``record(user, client_id, value, now)`` adds the value
and, when the rate is then over the quota, answers the throttle time Kafka answers:
``(rate - quota) / quota x the rate's window``. Time is always an argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from kipper.broker.quota.entities import CLIENT_ID, USER

INACTIVE_SENSOR_EXPIRATION_MS = 3600 * 1000  # Kafka's ClientQuotaManagerConfig: 1 hour


@dataclass(frozen=True)
class WindowSettings:
    samples: int = 11   # quota.window.num (Kafka's default)
    window_s: int = 1   # quota.window.size.seconds (Kafka's default)

    @classmethod
    def from_config(cls, config) -> "WindowSettings":
        return cls(config["quota.window.num"], config["quota.window.size.seconds"])

    @property
    def window_ms(self) -> int:
        return self.window_s * 1000


class Rate:
    """Kafka's Rate over a SampledStat: a ring of ``samples`` windows; a window starts
    at the first record after the previous one is complete, windows older than
    samples x window are reset; the rate divides by the elapsed time since the oldest
    window, but by no less than samples - 1 whole windows."""

    __slots__ = ("samples", "window_ms", "starts", "values", "current", "last_record_ms")

    def __init__(self, settings: WindowSettings, now: int):
        self.samples, self.window_ms = settings.samples, settings.window_ms
        self.starts, self.values = [now], [0.0]
        self.current = 0
        self.last_record_ms = now

    def record(self, value: float, now: int) -> None:
        self.last_record_ms = now
        if now - self.starts[self.current] >= self.window_ms:
            self.current = (self.current + 1) % self.samples
            if self.current >= len(self.starts):
                self.starts.append(now)
                self.values.append(0.0)
            else:
                self.starts[self.current], self.values[self.current] = now, 0.0
        self.values[self.current] += value

    def _purge(self, now: int) -> None:
        expire = self.samples * self.window_ms
        for i, start in enumerate(self.starts):
            if now - start >= expire:
                self.starts[i], self.values[i] = now, 0.0

    def window_size_ms(self, now: int) -> int:
        self._purge(now)
        elapsed = now - min(self.starts)
        full, least = elapsed // self.window_ms, self.samples - 1
        if full < least:
            elapsed += (least - full) * self.window_ms
        return max(elapsed, 1)

    def measure(self, now: int) -> float:
        """The rate per second now."""
        size = self.window_size_ms(now)  # purges first
        return sum(self.values) * 1000.0 / size


class Sensor:
    __slots__ = ("rate", "throttled", "throttle_ms_total")

    def __init__(self, settings: WindowSettings, now: int):
        self.rate = Rate(settings, now)
        self.throttled = 0
        self.throttle_ms_total = 0


class ClientQuotaManager:
    def __init__(self, key: str, settings: WindowSettings = WindowSettings(), max_throttle_ms: int | None = None):
        self.key = key
        self.settings = settings
        self.max_throttle_ms = max_throttle_ms  # Kafka bounds only the request quota's (one window)
        self.quotas: dict = {}  # (user or None, client or None, has user, has client) -> value
        self.sensors: dict[tuple[str, str], Sensor] = {}

    @property
    def enabled(self) -> bool:
        return bool(self.quotas)

    def set_quotas(self, quotas: dict) -> None:
        """From the client-quota store: Entity -> {key: value}. Sensors of clients whose
        quota entity changed start again (Kafka re-tags them as well)."""
        mine = {}
        for entity, values in quotas.items():
            if self.key in values:
                names = dict(entity)
                mine[(names.get(USER), names.get(CLIENT_ID), USER in names, CLIENT_ID in names)] = values[self.key]
        if mine != self.quotas:
            self.quotas = mine
            self.sensors.clear()

    def quota_for(self, user: str, client_id: str) -> tuple[tuple[str, str], float] | None:
        """(sensor tags (user, client id), quota) for a request, or None: no quota applies."""
        q = self.quotas
        if not q:
            return None
        for key, tags in (((user, client_id, True, True), (user, client_id)),
                          ((user, None, True, True), (user, client_id)),
                          ((user, None, True, False), (user, "")),
                          ((None, client_id, True, True), (user, client_id)),
                          ((None, None, True, True), (user, client_id)),
                          ((None, None, True, False), (user, "")),
                          ((None, client_id, False, True), ("", client_id)),
                          ((None, None, False, True), ("", client_id))):
            value = q.get(key)
            if value is not None:
                return tags, value
        return None

    def record(self, user: str, client_id: str, value: float, now: int) -> int:
        """Count ``value`` (bytes, or request time in percent-seconds) for the client;
        0, or the throttle time in ms when its rate is now over its quota."""
        found = self.quota_for(user, client_id or "")
        if found is None:
            return 0
        tags, quota = found
        sensor = self.sensors.get(tags)
        if sensor is None:
            sensor = self.sensors[tags] = Sensor(self.settings, now)
        rate = sensor.rate
        rate.record(value, now)
        measured = rate.measure(now)
        if measured <= quota:
            return 0
        throttle = round((measured - quota) / quota * rate.window_size_ms(now))
        if self.max_throttle_ms is not None:
            throttle = min(throttle, self.max_throttle_ms)
        if throttle > 0:
            sensor.throttled += 1
            sensor.throttle_ms_total += throttle
        return throttle

    def unrecord(self, user: str, client_id: str, value: float, now: int) -> None:
        """Take back a value recorded for an answer that was not sent (a throttled Fetch
        is answered empty), as Kafka's unrecordQuotaSensor."""
        found = self.quota_for(user, client_id or "")
        if found is not None and found[0] in self.sensors:
            self.sensors[found[0]].rate.record(-value, now)

    def max_value_in_window(self, user: str, client_id: str) -> float | None:
        """What the quota allows over the rate's shortest window (Kafka caps a Fetch's
        max_bytes with it), or None without a quota."""
        found = self.quota_for(user, client_id or "")
        if found is None:
            return None
        return found[1] * (self.settings.samples - 1) * self.settings.window_s

    def dispose(self, now: int) -> int:
        """Forget sensors idle for an hour (Kafka expires them alike)."""
        idle = [t for t, s in self.sensors.items() if now - s.rate.last_record_ms >= INACTIVE_SENSOR_EXPIRATION_MS]
        for t in idle:
            del self.sensors[t]
        return len(idle)

    def snapshot(self, now: int) -> list[dict]:
        out = []
        for (user, client_id), s in sorted(self.sensors.items()):
            found = self.quota_for(user or "", client_id or "")
            out.append({"user": user, "client_id": client_id, "rate": round(s.rate.measure(now), 3),
                        "quota": found[1] if found else None, "throttled": s.throttled,
                        "throttle_ms_total": s.throttle_ms_total})
        return out
