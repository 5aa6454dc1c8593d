"""A transport that keeps what a connection writes, for driving a real KafkaConnection
without a socket (tests and benchmarks/produce_path.py)."""

from __future__ import annotations

import asyncio


class RecordingTransport(asyncio.Transport):
    def __init__(self):
        super().__init__()
        self.frames: list = []  # what each write or writelines call was given

    def get_extra_info(self, name, default=None):
        return ("10.0.0.1", 4242) if name == "peername" else default

    def write(self, data) -> None:
        self.frames.append(data)

    def writelines(self, buffers) -> None:
        self.frames.append(list(buffers))

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass
