"""The producer's send engine: every decision the send thread makes, with time
as an argument and no sockets, selectors or threads (issue 10; aiokafka's
accumulator/sender split).

A batch moves QUEUED (accumulator) -> IN FLIGHT (in a ProduceRequest handed to
the shell) -> DONE (a completion the shell runs outside the lock), or back to
QUEUED for a retry. The engine also chooses partitions (``send`` and parked
records share one choice), asks for metadata and producer ids, and applies
delivery.timeout.ms, request.timeout.ms and KIP-360.

Locking is the caller's: the producer lock is held around every method except
``on_produce_response`` and ``run_completions`` (send thread only, see there).
"""

from __future__ import annotations

from collections import defaultdict, deque

from kipper.client import idempotence as idem
from kipper.client.accumulator import Accumulator, PendingRecord
from kipper.client.batch import Callback, ProducerBatch, RecordFuture
from kipper.client.config import ProducerConfig
from kipper.client.logs import get_logger
from kipper.client.metadata import ClusterMetadata
from kipper.client.open_batches import OpenBatches
from kipper.client.partitioner import Partitioner
from kipper.client.send_requests import ControlRequest, ProduceRequest
from kipper.protocol.errors import ErrorCode, KafkaError
from kipper.protocol.messages.init_producer_id import INIT_PRODUCER_ID
from kipper.protocol.messages.metadata import METADATA
from kipper.protocol.messages.produce import PRODUCE

log = get_logger(__name__)

_LEADER_ERRORS = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                            ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.FENCED_LEADER_EPOCH,
                            ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.NOT_ENOUGH_REPLICAS,
                            ErrorCode.KAFKA_STORAGE_ERROR})
_COORDINATOR_ERRORS = frozenset({ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                                 ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR})
_NO_PRODUCER_ID_DELAY = 0.05  # how soon to look again while the producer id is being obtained


class SendEngine:
    def __init__(self, config: ProducerConfig, accumulator: Accumulator):
        self.config = config
        self.accumulator = accumulator
        self.idempotence = idem.IdempotenceState(config.enable_idempotence)
        self.metadata = ClusterMetadata()
        self.partitioner = Partitioner(config.partitioner)
        # unkeyed records: the sticky choice, read without a call on the hot path
        self._sticky = self.partitioner.sticky if config.partitioner in ("default", "sticky") else {}
        # the batches Producer.send's fast path appends to (open_batches.py)
        self.fast_path = OpenBatches(accumulator, self.partitioner, self._sticky, config.partitioner)
        self.open_batches = self.fast_path.unkeyed
        self.metrics = {"records": 0, "bytes": 0, "requests": 0, "batches": 0, "retries": 0,
                        "errors": 0, "disconnects": 0, "request_latency_sum": 0.0,
                        "request_latency_max": 0.0, "epoch_bump_requests": 0, "sent_calls": 0}
        self.force_close = False  # set by the shell when closing gives up: no more retries
        self.fatal_error: BaseException | None = None  # once set, send() raises it
        self._completions: list[tuple[ProducerBatch, int, BaseException | None, int]] = []
        # batches failed while still on the wire (KIP-360, fatal errors): their
        # answers change nothing when they come
        self._abandoned: set[ProducerBatch] = set()
        # requests handed to the shell and not yet answered, oldest first, per node
        self._in_flight: dict[int, deque] = {}
        self._produce_in_flight: dict[int, int] = {}
        self._metadata_in_flight = False
        self._pid_in_flight = False
        self._next_metadata_at = 0.0

    # --- caller's thread ---------------------------------------------------------------

    def append(self, topic: str, key, value, timestamp: int, headers, partition: int | None,
               future: RecordFuture, callback: Callback | None, clock) -> bool | None:
        """The one partition choice (``send`` and parked records), then the
        append. Returns True if a batch was started, False if the record joined
        one or failed at once (bad partition), None if the topic has no metadata
        yet or older records of it are still parked: then ``park`` it."""
        info = self.metadata.topics.get(topic)
        acc = self.accumulator
        if info is None or (acc.undesignated and topic in acc.undesignated):
            return None
        n = len(info.leaders)
        if partition is None:
            p = self._sticky.get(topic, -1) if key is None else -1
            if p < 0 or p >= n:  # keyed, or no sticky partition yet
                p = self.partitioner.partition(topic, key, n)
        elif 0 <= partition < n:
            p = partition
        else:
            future.fail_early(KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                         f"partition {partition} of {topic} does not exist ({n} partitions)"))
            return False
        batch, new = acc.append((topic, p), key, value, timestamp, headers, future, callback, clock)
        if new and key is None and partition is None:
            self.partitioner.on_new_batch(topic, p, n)
        self.fast_path.note(topic, p, n, batch)  # after every append: a key or headers make a batch unfit
        return new

    def park(self, topic: str, key, value, timestamp: int, headers, partition: int | None,
             callback: Callback | None, size: int, now: float) -> RecordFuture:
        """No metadata for the topic yet: wait in its undesignated queue (seed 001)."""
        acc = self.accumulator
        future = RecordFuture(topic, timestamp, acc.gate_for(topic, now))
        acc.park(topic, PendingRecord(key, value, timestamp, headers, future, callback, partition, size, now))
        self.metadata.wanted.add(topic)
        return future

    def settled(self) -> bool:
        """Nothing queued, parked, in flight or waiting to complete (flush is done)."""
        return self.accumulator.used == 0 and not self._completions

    def pending_records(self) -> int:
        acc = self.accumulator
        queued = sum(b.count for b in acc.pending_batches())
        parked = sum(len(u.records) for u in acc.undesignated.values())
        in_flight = sum(b.count for requests in list(self._in_flight.values()) for r in list(requests)
                        if r.api is PRODUCE for b in r.batches)
        return queued + parked + in_flight + sum(b.count for b, *_ in self._completions)

    def stats(self) -> dict:
        s = self.idempotence
        return {"producer_id": s.producer_id, "producer_epoch": s.producer_epoch,
                "max_in_flight_sequences": s.window, "epoch_bumps": s.epoch_bumps}

    # --- send thread: what to send -------------------------------------------------------

    def poll(self, now: float) -> None:
        """Place parked records whose metadata arrived (fail those that waited
        past max.block.ms) and expire batches past delivery.timeout.ms."""
        self._place_parked(now)
        self._expire(now)

    def producer_id_request(self) -> ControlRequest | None:
        """InitProducerId, if idempotence needs a producer id and none is asked for."""
        s = self.idempotence
        if self._pid_in_flight or not s.needs_producer_id():
            return None
        since = None
        if s.producer_id >= 0:  # KIP-360 (v3+): ask to bump our own epoch
            since = (3, {"producer_id": s.producer_id, "producer_epoch": s.producer_epoch})
        return ControlRequest(INIT_PRODUCER_ID, 0, 5,
                              {"transactional_id": None, "transaction_timeout_ms": -1}, since)

    def metadata_request(self, now: float) -> ControlRequest | None:
        """Metadata, if it is stale, asked for, or a topic waits for it."""
        if self._metadata_in_flight or now < self._next_metadata_at:
            return None
        if not (self.metadata.stale(now, self.config.metadata_max_age_ms / 1000.0)
                or self.accumulator.waiting_topics()):
            return None
        topics = [{"name": t, "topic_id": None} for t in sorted(self.metadata.wanted)]
        return ControlRequest(METADATA, 1, 12, {"topics": topics, "allow_auto_topic_creation": True})

    def unsupported(self, request: ControlRequest) -> None:
        """No version of ``request`` is common with the broker."""
        if request.api is INIT_PRODUCER_ID:
            self._fail_fatally(KafkaError(ErrorCode.UNSUPPORTED_VERSION,
                                          "broker does not support InitProducerId (idempotence)"))

    def drain(self, now: float, node_ready) -> tuple[float, list[ProduceRequest]]:
        """The ProduceRequests to send now, at most one per free in-flight slot
        of each leader for which ``node_ready(node_id)`` is true, with sequences
        assigned; and when to look again."""
        s = self.idempotence
        if s.state == idem.BUMPING:
            s.maybe_finish_bump()  # False: a new producer id is needed; the next turn asks for it
        if s.enabled and s.state not in (idem.READY, idem.BUMPING):
            return now + _NO_PRODUCER_ID_DELAY, []
        acc = self.accumulator
        by_node: dict[int, list] = defaultdict(list)
        # A partition whose leader has a free in-flight slot wakes the send
        # thread when its head batch becomes ready; one that waits for an
        # answer (in-flight or sequence window full) is woken by that answer,
        # so it must not count here, or the thread spins while the window is full.
        next_ready = float("inf")
        leaderless = []
        for tp in acc.partitions_with_data():
            leader = self.metadata.leader(*tp)
            if leader < 0:
                self.metadata.refresh_requested = True
                leaderless.append(tp)
                continue
            by_node[leader].append(tp)
        if leaderless:
            next_ready = acc.next_ready_at(leaderless)
        cfg = self.config
        out = []
        for node_id, partitions in by_node.items():
            if not node_ready(node_id):
                next_ready = min(next_ready, acc.next_ready_at(partitions))
                continue
            max_in_flight = s.max_in_flight(cfg.max_in_flight_requests_per_connection,
                                            cfg.max_in_flight_explicit)
            in_flight = self._produce_in_flight.get(node_id, 0)
            while in_flight < max_in_flight:
                batches, nr = acc.drain(partitions, now, cfg.max_request_size,
                                        lambda tp, b: s.can_send(tp, b, in_flight, max_in_flight))
                next_ready = min(next_ready, nr)
                if not batches:
                    break
                for b in batches:
                    s.assign((b.topic, b.partition), b)
                    b.attempts += 1
                    b.in_flight = True
                    b.retry_at = 0.0
                request = ProduceRequest(node_id, batches, now, cfg)
                self._track(request)
                out.append(request)
                in_flight += 1
        return next_ready, out

    def sent(self, request, node_id: int, now: float) -> None:
        """The shell wrote ``request`` to ``node_id``'s connection."""
        if request.api is PRODUCE:
            m = self.metrics
            m["requests"] += 1
            m["batches"] += len(request.batches)
            for b in request.batches:
                m["records"] += b.count
                m["bytes"] += b.sealed_size
            if not request.expects_response:  # acks=0: done once written
                self._untrack(request)
                for b in request.batches:
                    b.in_flight = False
                    self.idempotence.on_success((b.topic, b.partition), b)
                    self._finish(b, -1, None)
            return
        request.node_id = node_id
        request.sent_at = now
        self._track(request)
        if request.api is METADATA:
            self._metadata_in_flight = True
            self._next_metadata_at = now + self.config.retry_backoff_ms / 1000.0
        else:
            self._pid_in_flight = True
            self.idempotence.state = idem.INITIALIZING

    # --- send thread: what came back -----------------------------------------------------

    def on_produce_response(self, request: ProduceRequest, body, now: float) -> list:
        """Complete the acknowledged batches and return the failed ones, for
        ``retry_or_fail`` under the lock. Needs no lock: only the send thread
        touches sequences, in-flight requests and completions."""
        self._untrack(request)
        m = self.metrics
        latency = now - request.sent_at
        m["request_latency_sum"] += latency
        m["request_latency_max"] = max(m["request_latency_max"], latency)
        by_tp = {(b.topic, b.partition): b for b in request.batches}
        failed = []
        for t in body.responses:
            for p in t.partition_responses:
                batch = by_tp.pop((t.name, p.index), None)
                if batch is None:
                    continue
                batch.in_flight = False
                if self._abandoned and batch in self._abandoned:
                    self._abandoned.discard(batch)
                elif p.error_code in (0, ErrorCode.DUPLICATE_SEQUENCE_NUMBER):
                    self.idempotence.on_success((batch.topic, batch.partition), batch)
                    offset = p.base_offset if p.error_code == 0 else -1  # seed 000: no offset for a duplicate
                    self._finish(batch, offset, None, p.get("log_append_time_ms", -1))
                else:
                    failed.append((batch, p.error_code, p.get("error_message")))
        failed.extend((b, ErrorCode.UNKNOWN_SERVER_ERROR, "no answer for partition") for b in by_tp.values())
        return failed

    def retry_or_fail(self, failed: list, now: float) -> None:
        for batch, code, message in failed:
            self._on_batch_error(batch, code, now, message)

    def on_control_response(self, request: ControlRequest, body, now: float) -> None:
        self._untrack(request)
        if request.api is METADATA:
            self._metadata_in_flight = False
            self.metadata.update(body, now)
            self.fast_path.clear()  # partition counts may have changed: choose again
            return
        self._pid_in_flight = False
        s = self.idempotence
        if body.error_code == 0:
            window = body.get("max_in_flight_sequence_number_per_connection", -1)
            s.set_producer_id(body.producer_id, body.producer_epoch, window if window and window > 0 else None)
            log.debug("producer_id_assigned", producer_id=body.producer_id, epoch=body.producer_epoch,
                      window=s.window)
        elif body.error_code in _COORDINATOR_ERRORS:
            s.state = idem.UNINITIALIZED
        else:
            self._fail_fatally(KafkaError(body.error_code, "InitProducerId failed"))

    def on_disconnected(self, node_id: int, now: float, reason: str) -> int:
        """The connection to ``node_id`` is gone: its requests will never be
        answered. Returns how many were lost."""
        self.metadata.refresh_requested = True
        self.metrics["disconnects"] += 1
        lost = self._in_flight.pop(node_id, ())
        self._produce_in_flight.pop(node_id, None)
        for request in lost:
            self._lost(request, now, reason)
        return len(lost)

    def on_send_failed(self, request, now: float, reason: str) -> None:
        """``request`` could not be written (its connection closed meanwhile)."""
        if self._untrack(request):
            self._lost(request, now, reason)

    def timed_out_nodes(self, now: float) -> list[int]:
        """Nodes with a request unanswered for request.timeout.ms: the shell closes them."""
        limit = self.config.request_timeout_ms / 1000.0
        return [node for node, requests in self._in_flight.items()
                if requests and now - requests[0].sent_at > limit]

    # --- completions and shutdown ----------------------------------------------------------

    def run_completions(self) -> bool:
        """Complete finished batches; user callbacks run here, so the shell
        calls this outside the lock. Returns whether anything completed."""
        if not self._completions:
            return False
        done, self._completions = self._completions, []
        acc = self.accumulator
        for batch, base_offset, error, append_time in done:
            batch.complete(base_offset, error, append_time)
            acc.release(batch)
        return True

    def idle(self) -> bool:
        return self.accumulator.is_empty() and not any(self._in_flight.values())

    def fail_remaining(self, error: BaseException) -> None:
        """The send thread stops: fail whatever was not delivered."""
        if not self.accumulator.is_empty() or self.idempotence.unacked_count():
            self.fail_everything(error)

    def fail_everything(self, error: BaseException) -> None:
        acc = self.accumulator
        for dq in acc.queues.values():
            while dq:
                self._finish(dq.popleft(), -1, error)
        for topic in list(acc.undesignated):
            self._fail_parked(topic, error)
        for batch in self.idempotence.forget_all():
            if not batch.done:
                self._finish(batch, -1, error)

    # --- internals ---------------------------------------------------------------------------

    def _track(self, request) -> None:
        requests = self._in_flight.get(request.node_id)
        if requests is None:
            requests = self._in_flight[request.node_id] = deque()
        requests.append(request)
        if request.api is PRODUCE:
            self._produce_in_flight[request.node_id] = self._produce_in_flight.get(request.node_id, 0) + 1

    def _untrack(self, request) -> bool:
        requests = self._in_flight.get(request.node_id)
        if not requests:
            return False
        if requests[0] is request:  # answers come in request order
            requests.popleft()
        else:
            try:
                requests.remove(request)
            except ValueError:
                return False
        if request.api is PRODUCE:
            self._produce_in_flight[request.node_id] -= 1
        return True

    def _lost(self, request, now: float, reason: str) -> None:
        if request.api is PRODUCE:
            for batch in request.batches:
                self._on_batch_error(batch, ErrorCode.NETWORK_EXCEPTION, now, reason)
        elif request.api is METADATA:
            self._metadata_in_flight = False
        else:
            self._pid_in_flight = False
            if self.idempotence.state == idem.INITIALIZING:  # ask again, or wait forever
                self.idempotence.state = idem.UNINITIALIZED

    def _place_parked(self, now: float) -> None:
        acc = self.accumulator
        meta = self.metadata
        for topic in acc.waiting_topics():
            meta.wanted.add(topic)
            if meta.partitions(topic):
                parked = acc.take_undesignated(topic)
                clock = lambda: now  # noqa: E731 -- read only when a batch is created
                for r in parked.records:
                    self.append(topic, r.key, r.value, r.timestamp, r.headers, r.partition, r.future,
                                r.callback, clock)
                parked.gate.set()
            elif now - acc.undesignated[topic].since > self.config.max_block_ms / 1000.0:
                code = meta.errors.get(topic)
                error = (KafkaError(code, f"no metadata for topic {topic}") if code is not None else
                         TimeoutError(f"topic {topic} not present in metadata after "
                                      f"{self.config.max_block_ms} ms"))
                self._fail_parked(topic, error)

    def _fail_parked(self, topic: str, error: BaseException) -> None:
        parked = self.accumulator.take_undesignated(topic)
        if parked is None:
            return
        for r in parked.records:
            r.future.fail_early(error)
            self.metrics["errors"] += 1
            if r.callback is not None:
                try:
                    r.callback(error, r.future.metadata())
                except Exception:
                    log.exception("delivery_callback_failed", topic=topic)
        parked.gate.set()

    def _expire(self, now: float) -> None:
        limit = self.config.delivery_timeout_ms / 1000.0
        for tp, dq in list(self.accumulator.queues.items()):
            while dq and not dq[0].in_flight and now - dq[0].created > limit:
                batch = dq.popleft()
                self._fail_batch(batch, TimeoutError(
                    f"batch for {tp[0]}-{tp[1]} expired after {self.config.delivery_timeout_ms} ms"), None)

    def _on_batch_error(self, batch: ProducerBatch, code: int, now: float, message=None) -> None:
        batch.in_flight = False
        if self._abandoned and batch in self._abandoned:
            self._abandoned.discard(batch)
            return
        action = self.idempotence.classify((batch.topic, batch.partition), batch, code)
        cfg = self.config
        expired = now - batch.created > cfg.delivery_timeout_ms / 1000.0
        if action == idem.RETRY and batch.attempts <= cfg.retries and not expired and not self.force_close:
            self.metrics["retries"] += 1
            if code in _LEADER_ERRORS or code == ErrorCode.NETWORK_EXCEPTION:
                self.metadata.refresh_requested = True
            self.accumulator.requeue(batch, now + cfg.retry_backoff_ms / 1000.0)
            return
        error = KafkaError(code, message or "")
        if code in idem.FATAL_ERRORS:
            self._fail_fatally(error)
            return
        self._fail_batch(batch, error, code)

    def _fail_fatally(self, error: BaseException) -> None:
        self.fatal_error = error
        self.idempotence.fail_fatally(error)
        self.fail_everything(error)

    def _fail_batch(self, batch: ProducerBatch, error: BaseException, code: int | None) -> None:
        """KIP-360: the later batches of the partition fail with it, and the
        epoch is bumped once in-flight batches settle."""
        later = self.idempotence.on_failure((batch.topic, batch.partition), batch, code)
        self._finish(batch, -1, error)
        for other in later:
            dq = self.accumulator.queues.get((other.topic, other.partition))
            if dq and other in dq:
                dq.remove(other)
            self._finish(other, -1, KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                                               "an earlier batch of this partition failed (KIP-360)"))
        if later or batch.base_sequence >= 0:
            self.metrics["epoch_bump_requests"] += 1

    def _finish(self, batch: ProducerBatch, base_offset: int, error, append_time: int = -1) -> None:
        batch.closed = True  # failed while queued (expired, fatal): nothing may join it
        batch.room = 0  # nor take the fast path (its bytes stay in size, released on completion)
        if error is not None:
            self.metrics["errors"] += batch.count
        if batch.in_flight:
            self._abandoned.add(batch)
        self._completions.append((batch, base_offset, error, append_time))
