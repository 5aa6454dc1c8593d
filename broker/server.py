"""The broker process: listeners, periodic engine ticks, graceful shutdown.

This is the asyncio shell around the engines, which ``build_engines`` makes
(broker/composition.py). It runs their recovery (``open_engines``), builds the
``Dispatcher``, binds each listener, hands connections to ``KafkaConnection``,
drives time-based work (group session expiry, retention) by calling the engines'
``tick``/``expire`` methods, swaps in a new set of engines on ``reset``, and on
SIGTERM/SIGINT stops accepting, closes connections and logs final counters. Message schemas are
compiled per (api, version) on first use, not at start (protocol/schema.py), so a
broker accepts connections as soon as its listeners are bound; with
``metrics.http.listener`` it also serves Prometheus metrics (broker/prometheus.py), and with
``schema.registry.listeners`` Confluent's Schema Registry API (broker/registry_http/).
"""

from __future__ import annotations

import asyncio
import gc
import signal
import socket
from typing import Callable

import structlog

from kipper.broker.cleaner.service import CLEANER_SLICE_S
from kipper.broker.composition import Engines, build_engines, log_dirs, now_ms
from kipper.broker.config import BrokerConfig
from kipper.broker.connection import KafkaConnection
from kipper.broker.context import Session
from kipper.broker.dispatcher import Dispatcher
from kipper.broker.faults.dispatch import FaultingDispatcher
from kipper.broker.faults.plan import FaultPlan
from kipper.broker.fetcher import ReplicaFetchers
from kipper.broker.lifecycle import BrokerLifecycle
from kipper.broker.txn_markers import TxnMarkerSender
from kipper.broker.txn_verifier import TxnVerifier
from kipper.broker.metrics_dump import from_config as metrics_dumper
from kipper.broker.security import tls
from kipper.broker.security.service import SASL_PROTOCOLS
from kipper.protocol.framing import ChunkPool

log = structlog.get_logger(__name__)

GROUP_TICK_S = 0.1
SESSION_CHECK_S = 0.1  # the controller looks for expired broker sessions this often
FETCHER_CHECK_S = 0.5  # a broker looks again at the partitions it follows this often (and on metadata)
SHARE_TICK_S = 0.05  # acquisition-lock expiry, share-group sessions, checkpoints
CONFIG_STORE_RELOAD_S = 1.0  # users.json / quotas.json edited by `kipper users` or another tool
LOG_FLUSH_CHECK_S = 1.0  # flush.ms is checked this often (Kafka's log.flush.scheduler.interval.ms)
IDLE_INTERVAL_S = 1.0  # a tick with nothing to expire waits this long (Periodic)


class Periodic:
    """Calls ``fn()`` every ``interval`` seconds on the loop, logging failures.

    With ``idle`` (a predicate: the engine holds nothing that can expire), it waits
    ``IDLE_INTERVAL_S`` instead while ``idle()`` is true, until ``wake`` brings it back to
    ``interval``: an idle broker then wakes a few times a second instead of thirty (the
    group and share-group ticks), and any request that leaves state to expire wakes the
    timer at the end of its read burst (``BrokerServer._after_burst``)."""

    def __init__(self, name: str, interval: float, fn: Callable[[], None],
                 idle: Callable[[], bool] | None = None):
        self.name = name
        self.interval = interval
        self.fn = fn
        self.idle = idle
        self.sleeping = False  # waiting IDLE_INTERVAL_S
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self.sleeping = self.idle is not None and self.interval < IDLE_INTERVAL_S and self.idle()
        self._handle = asyncio.get_running_loop().call_later(
            IDLE_INTERVAL_S if self.sleeping else self.interval, self._run)

    def wake(self) -> None:
        """Back to ``interval`` (from now) if sleeping."""
        if self.sleeping:
            self.stop()
            self.sleeping = False
            self._handle = asyncio.get_running_loop().call_later(self.interval, self._run)

    def _run(self) -> None:
        try:
            self.fn()
        except Exception:
            log.exception("periodic_task_failed", task=self.name)
        self.start()

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


def open_engines(config: BrokerConfig, clock=now_ms) -> Engines:
    """A broker's engines with what its log.dirs hold recovered: the shell's first step
    (tests that want a whole broker without sockets take it too)."""
    engines = build_engines(config, clock)
    engines.recover()
    return engines


class BrokerServer:
    def __init__(self, config: BrokerConfig, clock=now_ms, faults: FaultPlan | None = None):
        """``faults``: a test broker's plan (kipper.testing): every request counted, and
        the faults a test asks for applied (broker/faults/)."""
        self.config = config
        self.engines = engines = open_engines(config, clock)
        self.dispatcher = Dispatcher.of(engines) if faults is None else FaultingDispatcher.of(engines, plan=faults)
        self.connections: set[KafkaConnection] = set()
        # receive buffers, shared by the connections (idle ones hold none); large frames in
        # their own mappings when the log keeps them in memory
        self.chunks = ChunkPool(mapped=not log_dirs(config))
        self.servers: list[asyncio.base_events.Server] = []
        now = engines.clock

        def current() -> Engines:  # (a reset replaces them: looked up at each call)
            return self.engines

        self.periodic: list[Periodic] = [
            Periodic("groups", GROUP_TICK_S, lambda: current().groups.tick(now()),
                     idle=lambda: current().groups.idle()),
            Periodic("retention", config["log.retention.check.interval.ms"] / 1000,
                     lambda: current().apply_retention(now())),
            Periodic("producer-state-expiry", config["producer.id.expiration.check.interval.ms"] / 1000,
                     lambda: current().producer_states.expire(now())),
            Periodic("producer-id-rotation", config["producer.id.expiration.ms"] / 1000,
                     lambda: current().producer_ids.rotate()),
            Periodic("offsets-expiry", 60.0, lambda: current().expire_offsets(now())),
            Periodic("share-groups", SHARE_TICK_S, lambda: current().share.tick(now()),
                     idle=lambda: current().share.idle()),
            Periodic("producer-id-quota-cleanup", engines.quotas.cleanup_interval_ms / 1000,
                     lambda: current().quotas.tick(now())),
            Periodic("transactions",
                     config["transaction.abort.timed.out.transaction.cleanup.interval.ms"] / 1000,
                     lambda: current().txn.tick(now())),
            Periodic("client-telemetry-expiry", 10.0, lambda: current().telemetry.expire(now())),
            Periodic("config-store-reload", CONFIG_STORE_RELOAD_S,
                     lambda: (current().security.reload(), current().quotas.reload(), current().acls.reload())),
        ]
        if engines.cleaner.enabled:
            self.periodic.append(Periodic("log-cleaner", config["log.cleaner.backoff.ms"] / 1000,
                                          self._start_cleaning))
        self._cleaning = False
        self._requests_seen = 0  # the metrics' request count at the last slice
        if engines.storage is not None:
            self.periodic += [
                Periodic("log-flush", LOG_FLUSH_CHECK_S, lambda: current().flush_logs(now())),
                Periodic("log-checkpoints", max(config["log.flush.offset.checkpoint.interval.ms"], 1000) / 1000,
                         lambda: current().checkpoint_logs()),
            ]
        self.bound: list[tuple] = []
        self._stopped = asyncio.Event()
        self.shutdown_hooks: list[Callable[[], None]] = []
        self.ready = False  # listeners bound and not stopping: /readyz
        self.metrics_http = None  # broker.prometheus.MetricsHttpServer, with metrics.http.listener
        self.registry_http: list = []  # broker.registry_http.server.RegistryHttpServer, per schema.registry.listeners
        # metrics dumps (issue #7): the loop snapshots, a writer thread does the file I/O
        self.metrics_dumper = metrics_dumper(engines.metrics, config, lambda: self.engines.topics, engines.clock)
        if self.metrics_dumper is not None:
            self.metrics_dumper.start()
            self.periodic.append(Periodic("metrics-dump", config["metrics.dump.interval.ms"] / 1000,
                                          self.metrics_dumper.tick))
            self.shutdown_hooks.append(self.metrics_dumper.close)
        self._may_sleep = [task for task in self.periodic if task.idle is not None]
        # a cluster's node (docs/CLUSTER.md): a broker's loops toward the controller and its
        # replica fetchers; the controller's session expiry and preferred elections
        self.lifecycle = self.fetchers = self.markers = self.verifier = None
        if engines.cluster is not None:
            self.lifecycle = BrokerLifecycle(self)
            self.fetchers = ReplicaFetchers(self)
            self.markers = TxnMarkerSender(self)
            self.verifier = TxnVerifier(self)
            self.periodic += [
                Periodic("isr-shrink", config["replica.lag.time.max.ms"] / 2000, lambda: current().cluster.tick(now())),
                Periodic("replica-fetchers", FETCHER_CHECK_S, self.cluster_changed)]
        if engines.controller is not None:
            self.periodic.append(Periodic("broker-sessions", SESSION_CHECK_S, lambda: current().controller.tick(now())))
            if config["auto.leader.rebalance.enable"]:
                self.periodic.append(Periodic("preferred-leaders", config["leader.imbalance.check.interval.seconds"],
                                              lambda: current().controller.elect_leaders(0, None, now())))

    # --- the log cleaner, in slices -------------------------------------------------------

    def _start_cleaning(self) -> None:
        if not self._cleaning and self.engines.cleaner.tick(self.engines.clock()):
            self._cleaning = True
            asyncio.get_running_loop().call_soon(self._clean_slice)

    def _clean_slice(self) -> None:
        """One slice of cleaning, and the next one when the cleaner says."""
        cleaner = self.engines.cleaner
        try:
            more = cleaner.step(self.engines.clock(), CLEANER_SLICE_S)
        except Exception:
            log.exception("log_cleaner_failed")
            more = False
        requests, self._requests_seen = self._requests_seen, self.engines.metrics.requests
        delay = cleaner.next_step_in(requests != self._requests_seen) if more else None
        loop = asyncio.get_running_loop()
        if delay is None:
            self._cleaning = False
        elif delay:
            loop.call_later(delay, self._clean_slice)
        else:
            loop.call_soon(self._clean_slice)  # the next loop turn, after its I/O

    async def serve(self) -> None:
        """Start answering on every listener (a cluster's broker, once caught up)."""
        for server in self.servers:
            await server.start_serving()
        log.info("broker_serving", node_id=self.engines.node_id)

    def cluster_changed(self) -> None:
        """The metadata moved: the replica fetchers follow the new plan."""
        if self.fetchers is not None:
            self.fetchers.update()

    def reset(self) -> None:
        """Every topic, group, producer state and transaction gone, as in a fresh broker
        (Engines.reset says what stays): a new set of engines, swapped in whole."""
        self.engines = self.engines.reset()
        self.dispatcher.engines = self.engines

    def _advertise(self) -> None:
        """What clients are told to connect to, per listener, once the ports are bound."""
        explicit = {a.name: (a.host, a.port) for a in self.config["advertised.listeners"]}
        for listener, port in self.bound:
            if listener.name in explicit:
                self.engines.advertised[listener.name] = explicit[listener.name]
            else:
                host = listener.host if listener.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
                self.engines.advertised[listener.name] = (host, port)

    def _session_factory(self, listener):
        protocol = self.config["listener.security.protocol.map"][listener.name]

        def make(transport, peer: str) -> Session:
            session = Session(listener=listener.name, peer=peer, security_protocol=protocol)
            self.engines.security.prepare_session(session, transport)
            return session
        return make

    def _after_burst(self) -> None:
        """After a connection's requests: a sleeping tick whose engine now holds state that
        can expire (a group was joined, records acquired) goes back to its interval."""
        for task in self._may_sleep:
            if task.sleeping and not task.idle():
                task.wake()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        max_frame = self.config["socket.request.max.bytes"]
        send_buffer = self.config["socket.send.buffer.bytes"]
        receive_buffer = self.config["socket.receive.buffer.bytes"]
        pmap = self.config["listener.security.protocol.map"]
        ssl_context = None
        for listener in self.config["listeners"]:
            factory = self._session_factory(listener)
            protocol = pmap[listener.name]
            if protocol in ("SSL", "SASL_SSL") and ssl_context is None:
                ssl_context = tls.server_context(self.config)
            pre_auth = self.config["sasl.server.max.receive.size"] if protocol in SASL_PROTOCOLS else None
            server = await loop.create_server(
                lambda f=factory, p=pre_auth: KafkaConnection(self.dispatcher, f, self.connections,
                                                              max_frame=max_frame, pre_auth_max_frame=p,
                                                              pool=self.chunks, after_burst=self._after_burst,
                                                              send_buffer=send_buffer),
                host=listener.host or None, port=listener.port, reuse_address=True, backlog=1024,
                ssl=ssl_context if protocol in ("SSL", "SASL_SSL") else None,
                # a cluster's broker answers once its metadata has caught up (BrokerLifecycle)
                start_serving=self.lifecycle is None)
            if receive_buffer >= 0:  # before any connection: accepted sockets inherit it (Kafka's Acceptor)
                for sock in server.sockets:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            port = server.sockets[0].getsockname()[1]
            self.servers.append(server)
            self.bound.append((listener, port))
        self._advertise()
        for task in self.periodic:
            task.start()
        if self.engines.controller is not None:
            self.engines.controller.bootstrap(self.engines.clock())
        if self.lifecycle is not None:
            self.lifecycle.start()
            self.markers.start()
            self.verifier.start()
        if self.config["metrics.http.listener"] is not None:
            self._start_metrics_http(loop)
        if self.config["schema.registry.listeners"]:
            self._start_registry_http(loop)
        self.ready = True
        log.info("broker_started", node_id=self.engines.node_id,
                 listeners=[f"{listener.name}://{listener.host}:{port}" for listener, port in self.bound],
                 advertised={k: f"{h}:{p}" for k, (h, p) in self.engines.advertised.items()},
                 loop=type(loop).__module__.split(".")[0],
                 **({"metrics_http": self.metrics_http.url} if self.metrics_http is not None else {}),
                 **({"schema_registry": [r.url for r in self.registry_http]} if self.registry_http else {}))

    def _start_metrics_http(self, loop) -> None:
        from kipper.broker import prometheus  # prometheus-client is imported only when asked for

        host, port = self.config["metrics.http.listener"]
        self.metrics_http = prometheus.MetricsHttpServer(
            host, port, on_loop=prometheus.on_loop(loop),
            snapshot=lambda: prometheus.broker_snapshot(self.engines), ready=lambda: self.ready)
        self.metrics_http.start()

    def _start_registry_http(self, loop) -> None:
        """The Schema Registry's listeners; imported only when asked for."""
        from kipper.broker.http_listener import on_loop
        from kipper.broker.registry_http import access, routes
        from kipper.broker.registry_http.server import RegistryHttpServer

        method = self.config["schema.registry.authentication.method"]
        protocols = set(self.config["listener.security.protocol.map"][listener.name]
                        for listener in self.config["listeners"])
        basic = method == "BASIC" or (method == "" and bool(protocols & set(SASL_PROTOCOLS)))
        authenticator = access.Authenticator(self.engines.security.credentials) if basic else None
        authorizer = access.Authorizer(self.engines.acls)

        def context() -> routes.Context:  # looked up at each request: a reset replaces the registry
            return routes.Context(self.engines.schema_registry, authorizer, self.engines.cluster_id)

        for scheme, host, port in self.config["schema.registry.listeners"]:
            ssl_context = tls.server_context(self.config) if scheme == "https" else None
            server = RegistryHttpServer(host, port, on_loop=on_loop(loop), context=context,
                                        authenticator=authenticator, ssl_context=ssl_context)
            server.start()
            self.registry_http.append(server)

    @property
    def schema_registry_url(self) -> str | None:
        return self.registry_http[0].url if self.registry_http else None

    def request_stop(self) -> None:
        self._stopped.set()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    async def stop(self) -> None:
        self.ready = False
        if self.lifecycle is not None:  # a controlled shutdown first: leaderships move away
            await self.lifecycle.stop()
            self.fetchers.stop()
            self.markers.stop()
            self.verifier.stop()
        for task in self.periodic:
            task.stop()
        for server in self.servers:
            server.close()
        for conn in list(self.connections):
            conn.close()
        for server in self.servers:
            try:
                await asyncio.wait_for(server.wait_closed(), 2)
            except asyncio.TimeoutError:
                pass
        if self.metrics_http is not None:  # its thread may wait on the loop: not from the loop
            await loop_thread(self.metrics_http.close)
        for registry in self.registry_http:
            await loop_thread(registry.close)
        for hook in self.shutdown_hooks:
            try:
                hook()
            except Exception:
                log.exception("shutdown_hook_failed")
        try:
            self.engines.close()
        except Exception:
            log.exception("storage_close_failed")
        engines = self.engines
        snap = engines.producer_states.snapshot()
        snap.pop("partitions")
        quota = engines.quotas.snapshot(engines.clock())
        log.info("broker_stopped", topics=len(engines.topics.all()), producer_state=snap,
                 producer_id_quota={k: quota[k] for k in ("users_tracked", "bloom_bytes")},
                 producer_ids_allocated=engines.producer_ids.allocated)


async def loop_thread(fn: Callable[[], None]) -> None:
    await asyncio.get_running_loop().run_in_executor(None, fn)


# The young generation is collected after this many allocations net of frees (CPython's
# default is 700). Requests leave no reference cycles (tests/unit/test_hot_path.py), so what
# the collector finds is long-lived data being built (a 1,000-partition topic is thousands of
# objects, which the default would scan a dozen times while they are made).
GC_YOUNG_THRESHOLD = 20_000


def tune_collector() -> None:
    """The ``kipper broker`` process's garbage collector, once it listens. What starting
    made (modules, compiled schemas, the config) lives as long as the process, so it is
    frozen out of every collection: a full collection of an unfrozen heap took 83 ms. It is
    frozen as it is, without collecting first: that collection found 5 unreachable objects
    and took 30 ms, which the first client would wait for."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


async def serve(config: BrokerConfig) -> None:
    server = BrokerServer(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.request_stop)
    await server.start()
    tune_collector()  # the process is the broker's alone (not the embedded broker's host)
    try:
        await server.wait_stopped()
    finally:
        log.info("broker_stopping")
        await server.stop()


def loop_factory():
    """uvloop when it is installed, the default asyncio loop otherwise."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run(config: BrokerConfig) -> None:
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve(config))
