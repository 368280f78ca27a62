"""One P4Runtime session with one device: the channel, the stream and the arbitration.

`Session` opens the gRPC channel (plaintext or TLS, tls.py), the StreamChannel with its
reader thread, and takes part in the device's arbitration (P4Runtime §5: the highest election
id is primary). The client (client.py) builds the RPCs on it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol, Self

import grpc
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from mpsched.p4rt.backlog import PACKET_OUT_BACKLOG, PacketOutBacklog
from mpsched.p4rt.messages import P4RuntimeError
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.tls import TlsError, TlsSettings, speaks_tls
from mpsched.p4rt.tls import channel as tls_channel

log = logging.getLogger(__name__)


class _ResponseStream(Protocol):
    """What the client uses of StreamChannel's call (a grpc call that is also an iterator of
    StreamMessageResponse; the generated stub is untyped)."""

    def __iter__(self) -> Iterator[p4runtime_pb2.StreamMessageResponse]: ...

    def cancel(self) -> bool: ...



class Session:
    """The channel, stream and arbitration of one device (see the module docstring)."""

    def __init__(
        self,
        address: str,
        device_id: int,
        p4info: P4Info,
        election_id: tuple[int, int] = (0, 1),
        timeout: float = 10.0,
        tls: TlsSettings | None = None,
        packet_out_backlog: int = PACKET_OUT_BACKLOG,
    ) -> None:
        self.address = address
        self.tls = tls  # None: plaintext (src/mpsched/p4rt/tls.py)
        self.device_id = device_id
        self.p4info = p4info
        self.election_id = election_id
        self.timeout = timeout
        self._channel: grpc.Channel | None = None
        self._stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        # None asks the request iterator to end the stream; an Exception is a broken stream
        self._requests: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
        # the PacketOuts among them, bounded (backlog.py: drop-new beyond the limit)
        self.packet_outs = PacketOutBacklog(packet_out_backlog, address)
        self._responses: queue.Queue[p4runtime_pb2.StreamMessageResponse | Exception] = (
            queue.Queue()
        )
        self._arbitration: queue.Queue[p4runtime_pb2.MasterArbitrationUpdate | Exception] = (
            queue.Queue()
        )
        self.is_primary = False
        self.arbitration_message = ""
        self.arbitration_election_id: tuple[int, int] = (0, 0)
        self.highest_election_id: tuple[int, int] = (0, 0)
        self._stream: _ResponseStream | None = None
        self._reader: threading.Thread | None = None
        # called by the stream's reader thread after each message it queued (a response, an
        # arbitration update, or the stream's end), so that a user can block on its own queue
        # instead of polling this one (southbound/agent.py)
        self.on_stream: Callable[[], None] | None = None

    # -- session ---------------------------------------------------------

    def connect(self, primary: bool = True, allow_backup: bool = False) -> None:
        """Open the channel; with `primary`, also the stream, and take part in the device's
        arbitration (P4Runtime §5) with this client's election id.

        The client with the highest election id is the primary; only it may write and it
        gets the digests. A client that is not primary raises P4RuntimeError, unless
        `allow_backup`: then it stays connected as a backup (`is_primary` False), learns of
        every arbitration change on its stream (`wait_arbitration`) and may still read. A
        client connected without `primary` can read (tables, counters) and nothing else.
        """
        self._channel = self._open_channel()
        try:
            grpc.channel_ready_future(self._channel).result(timeout=self.timeout)
        except grpc.FutureTimeoutError:
            self._channel.close()
            if self.tls is None and speaks_tls(self.address, 1.0):
                raise P4RuntimeError(
                    f"{self.address} speaks TLS and the controller plaintext: give the switch "
                    "tls settings (network description) or --tls-ca"
                ) from None
            raise P4RuntimeError(f"no P4Runtime server at {self.address}") from None
        self._stub = p4runtime_pb2_grpc.P4RuntimeStub(self._channel)
        if not primary:
            return
        self._stream = self._stub.StreamChannel(self._request_iterator())
        self._reader = threading.Thread(
            target=self._read_stream, name=f"p4rt-stream-{self.device_id}", daemon=True
        )
        self._reader.start()
        self._send_arbitration()
        if not self.wait_arbitration(self.timeout):
            raise P4RuntimeError(f"no arbitration answer from {self.address}")
        if not self.is_primary and not allow_backup:
            raise P4RuntimeError(
                f"not primary on device {self.device_id}: {self.arbitration_message}"
            )
        log.debug(
            "%s on device %d at %s",
            "primary" if self.is_primary else "backup",
            self.device_id,
            self.address,
        )

    def _send_arbitration(self) -> None:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.high = self.election_id[0]
        request.arbitration.election_id.low = self.election_id[1]
        self._requests.put(request)

    def wait_arbitration(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the next arbitration answer or update on the stream;
        False if none came. A broken stream raises P4RuntimeError."""
        try:
            update = self._arbitration.get(timeout=timeout)
        except queue.Empty:
            return False
        if isinstance(update, Exception):
            raise P4RuntimeError(f"stream to {self.address} failed: {update}")
        return True

    def become_primary_over(self, election_id: tuple[int, int]) -> None:
        """Arbitrate again with an election id above `election_id` and this client's own: a
        client promoted because the primary went away takes the highest id, so that the old
        primary, back with its old id, becomes a backup instead of preempting it."""
        high, low = max(election_id, self.election_id)
        self.election_id = (high + 1, 0) if low == 2**64 - 1 else (high, low + 1)
        self._send_arbitration()
        deadline = time.monotonic() + self.timeout
        while self.arbitration_election_id != self.election_id or not self.is_primary:
            if not self.wait_arbitration(max(0.0, deadline - time.monotonic())):
                raise P4RuntimeError(
                    f"device {self.device_id}: no primary answer for election id "
                    f"{self.election_id} ({self.arbitration_message})"
                )

    def _request_iterator(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            request = self._requests.get()
            if request is None:
                return
            if request.HasField("packet"):
                self.packet_outs.sent()
            yield request

    def _read_stream(self) -> None:
        if self._stream is None:
            return
        try:
            for response in self._stream:
                if response.HasField("arbitration"):
                    self._note_arbitration(response.arbitration)
                else:
                    self._responses.put(response)
                self._notify()
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                log.warning("P4Runtime stream of device %d ended: %s", self.device_id, error)
                self._responses.put(error)
                self._arbitration.put(error)
                self._notify()

    def _notify(self) -> None:
        callback = self.on_stream
        if callback is not None:
            callback()

    def _note_arbitration(self, update: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        """An arbitration answer or update: is this client primary, and the election id the
        device names (the primary's, for a backup; P4Runtime §5.3)."""
        eid = (update.election_id.high, update.election_id.low)
        self.is_primary = update.status.code == code_pb2.OK
        self.arbitration_message = update.status.message
        self.arbitration_election_id = eid
        self.highest_election_id = max(self.highest_election_id, eid)
        self._arbitration.put(update)

    def _open_channel(self) -> grpc.Channel:
        try:
            return tls_channel(self.address, self.tls, self.timeout)
        except TlsError as error:
            raise P4RuntimeError(f"refused over TLS: {error}") from None
        except OSError as error:
            raise P4RuntimeError(f"no P4Runtime server at {self.address}: {error}") from None

    def close(self) -> None:
        self._requests.put(None)
        if self._stream is not None:
            self._stream.cancel()
        if self._reader is not None:
            self._reader.join(timeout=2)
        if self._channel is not None:
            self._channel.close()
        self._channel = self._stub = self._stream = self._reader = None

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stub(self) -> p4runtime_pb2_grpc.P4RuntimeStub:
        if self._stub is None:
            raise P4RuntimeError("not connected")
        return self._stub

    # -- pipeline --------------------------------------------------------
