"""The test broker's dispatcher: the real one, with a fault plan in front of it.

Every request is counted. A request of an API the plan has faults for is dispatched
alone (not in a run) and, when a fault takes it, answered as the fault says: an error
answer built from the API's declaration (protocol/error_answers.py), merged with the real
answer for the entries the fault does not name; a delay; a lost answer; a closed
connection. A request no fault takes goes to the real dispatcher untouched.
"""

from __future__ import annotations

import asyncio
import io
import struct

from kipper.broker.dispatcher import Close, Dispatcher, Later
from kipper.broker.faults.plan import Fault, FaultPlan
from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.protocol import error_answers
from kipper.protocol.header import RESPONSE_HEADERS, encode_request, encode_with_schema, frame_bytes, read_client_id
from kipper.protocol.messages import APIS

_KEY_VERSION_CID = struct.Struct(">hhi")
_FRAME_TYPES = (bytes, bytearray, memoryview, list)

# APIs that only read: an error fault answers the real request and puts the code on the
# entries it names (Metadata keeps its brokers, Fetch its other partitions); the others are
# not handled for the entries a fault names, so nothing is stored for them
READ_ONLY = frozenset(key for key, api in APIS.items() if api.name.startswith(("Describe", "List")) or api.name in (
    "Fetch", "Metadata", "OffsetFetch", "FindCoordinator", "ApiVersions", "OffsetForLeaderEpoch",
    "ConsumerGroupDescribe", "ShareGroupDescribe", "StreamsGroupDescribe"))


class FaultingDispatcher(Dispatcher):
    @classmethod
    def of(cls, engines, *, runs: bool = True, plan: FaultPlan | None = None) -> "FaultingDispatcher":
        dispatcher = super().of(engines, runs=runs)
        dispatcher.plan = plan if plan is not None else FaultPlan()
        return dispatcher

    plan: FaultPlan

    def dispatch(self, frames: list, i: int, session) -> tuple[list, int]:
        frame = frames[i]
        if len(frame) < 8:
            return super().dispatch(frames, i, session)
        api_key, version, correlation_id = _KEY_VERSION_CID.unpack_from(frame, 0)
        plan = self.plan
        if api_key not in plan.by_api:
            answers, done = super().dispatch(frames, i, session)
            for j in range(i, i + done):
                plan.seen(*_KEY_VERSION_CID.unpack_from(frames[j], 0)[:2])
            return answers, done
        plan.seen(api_key, version)
        return [self._faulted(frame, api_key, version, correlation_id, session)], 1

    def _real(self, frame, session):
        return super().dispatch([frame], 0, session)[0][0]

    def _faulted(self, frame, api_key: int, version: int, correlation_id: int, session):
        api = APIS.get(api_key)
        if api is None or not api.supports(version):
            return self._real(frame, session)
        try:
            client_id, pos = read_client_id(frame, api.is_flexible(version))
            request = api.request_schema(version).parse(bytes(frame[pos:]))
        except Exception:  # malformed: the real dispatcher says so
            return self._real(frame, session)
        name_of = self._name_of
        fault = self.plan.take(api_key, version, lambda: error_answers.named(api, version, request), name_of)
        if fault is None:
            return self._real(frame, session)
        if fault.action == "close":
            return Close("fault_injected", f"{api.name}: connection closed by a test's fault")
        if fault.action == "error":
            return self._error(fault, api, version, correlation_id, client_id, request, frame, session)
        answer = self._real(frame, session)
        if fault.action == "drop":
            lost = Close("fault_injected", f"{api.name}: answer dropped by a test's fault")
            return _then(answer, lambda _: lost, lost)
        return _delayed(answer, fault.seconds)

    def _error(self, fault: Fault, api, version, correlation_id, client_id, request, frame, session):
        pick = error_answers.picks(fault.topic, fault.partitions, self._name_of)
        errors = error_answers.error_answer(api, version, request, fault.code, pick)
        if api.key in READ_ONLY:
            rest = frame
        else:
            rest = error_answers.without(api, version, request, pick) if fault.topic is not None else None
            if rest is None:
                if api.key == 0 and request.acks == 0:
                    return _UNANSWERED_FAILURE
                return encode_with_schema(api, version, correlation_id, errors)
            rest = memoryview(encode_request(api, version, correlation_id, client_id, rest))[4:]

        def merged(out):
            body = _decode(api, version, out)
            return encode_with_schema(api, version, correlation_id, error_answers.merge(api, version, body, errors))
        return _then(self._real(rest, session), merged, _UNANSWERED_FAILURE)

    def _name_of(self, key):
        """A topic's name for a key that may be its id (Fetch v13+, Produce v13)."""
        if isinstance(key, str):
            return key
        topic = self.engines.topics.by_id(key)
        return topic.name if topic is not None else key


def _decode(api, version: int, frame) -> dict:
    stream = io.BytesIO(frame_bytes(frame)[4:])
    RESPONSE_HEADERS[api.response_header_version(version)].parse_stream(stream)
    return api.response_schema(version).parse_stream(stream)


# Kafka closes the connection of an acks=0 producer whose write failed: it has no answer
# to read the error from
_UNANSWERED_FAILURE = Close("fault_injected", "Produce with acks=0 failed by a test's fault")


def _then(answer, fn, unanswered=NO_RESPONSE):
    """``answer`` with ``fn`` applied to its frame when there is one: now, or when a
    ``Later`` comes; a ``Close`` stays one, and no answer becomes ``unanswered``."""
    kind = type(answer)
    if kind in _FRAME_TYPES:
        return fn(answer)
    if kind is Reply:
        if answer.body is NO_RESPONSE:
            return unanswered if unanswered is not NO_RESPONSE else answer
        out = fn(answer.body)
        if type(out) is Close:
            return out
        answer.body = out
        return answer
    if kind is Later:
        inner = answer.finish
        return Later(answer.pending, lambda task: _then(inner(task), fn, unanswered), hold=answer.hold)
    return unanswered if answer is NO_RESPONSE else answer


def _delayed(answer, seconds: float | None):
    """``answer`` given ``seconds`` later (None: never); no answer stays none."""
    if answer is NO_RESPONSE or type(answer) is Close:
        return answer

    async def wait():
        if seconds is None:
            await asyncio.get_running_loop().create_future()  # never done: the slot stays open
        await asyncio.sleep(seconds)
        if type(answer) is not Later:
            return answer
        task = asyncio.ensure_future(answer.pending)
        await asyncio.wait([task])
        return answer.finish(task)
    return Later(wait(), lambda task: task.result(), hold=type(answer) is Later and answer.hold)
