"""A small, blocking P4Runtime client for one device.

Used by the controller (from native threads, never from eventlet green
threads), the PTF tests and the integration tests. Entities are named as in
the P4Info; values are ints, MAC/IPv4 strings or raw bytes.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from mpsched.p4rt.p4info import P4Info, decode_uint, encode_ipv4, encode_mac, encode_uint
from mpsched.p4rt.reconcile import Diff, config_cookie, diff
from mpsched.p4rt.tls import TlsError, TlsSettings, speaks_tls
from mpsched.p4rt.tls import channel as tls_channel

log = logging.getLogger(__name__)

Value = int | str | bytes
# A match field's value: exact; (value, prefix_len) lpm, (value, mask) ternary, (low, high) range.
MatchValue = Value | tuple[Value, Value]


class P4RuntimeError(RuntimeError):
    """A P4Runtime RPC failed; `details` lists the per-update errors of a Write."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        self.details = details or []
        text = message if not self.details else f"{message}: {'; '.join(self.details)}"
        super().__init__(text)

    @property
    def not_found(self) -> bool:
        """An update failed because the entry does not exist (MODIFY, DELETE)."""
        return any("NOT_FOUND" in d for d in self.details)


def encode_value(value: Value, bitwidth: int) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        if value.count(":") == 5:
            return encode_mac(value)
        if value.count(".") == 3:
            return encode_ipv4(value)
        raise ValueError(f"cannot encode {value!r}")
    return encode_uint(int(value), bitwidth)


@dataclass
class TableEntry:
    """A table entry by P4Info names.

    match: field name -> value (exact), (value, prefix_len) (lpm),
    (value, mask) (ternary) or (low, high) (range); omit a field for a
    wildcard. is_default selects the table's default entry (match empty).
    """

    table: str
    match: Mapping[str, MatchValue] = field(default_factory=dict)
    action: str | None = None
    params: Mapping[str, Value] = field(default_factory=dict)
    priority: int = 0
    is_default: bool = False


@dataclass(frozen=True)
class CounterValue:
    packets: int
    bytes: int


def _status_details(error: grpc.RpcError) -> list[str]:
    details: list[str] = []
    for item in error.trailing_metadata() or ():
        if item.key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status()
        status.ParseFromString(item.value)
        for i, detail in enumerate(status.details):
            p4_error = p4runtime_pb2.Error()
            if detail.Unpack(p4_error) and p4_error.canonical_code != code_pb2.OK:
                name = code_pb2.Code.Name(p4_error.canonical_code)
                details.append(f"update {i}: {name} {p4_error.message}")
    return details


def _set_field_match(
    fm: p4runtime_pb2.FieldMatch, kind: str, value: MatchValue, bitwidth: int, where: str
) -> None:
    """Fill the FieldMatch `fm` of match kind `kind` (a P4Info MatchType name) from `value`."""
    if kind == "EXACT":
        if isinstance(value, tuple):
            raise ValueError(f"EXACT field {where} takes one value, got {value!r}")
        fm.exact.value = encode_value(value, bitwidth)
        return
    if kind not in ("LPM", "TERNARY", "RANGE"):
        raise ValueError(f"match kind {kind} of {where} not supported")
    if not isinstance(value, tuple):
        raise ValueError(f"{kind} field {where} takes a pair, got {value!r}")
    first, second = value
    if kind == "LPM":  # (value, prefix_len)
        fm.lpm.value = encode_value(first, bitwidth)
        fm.lpm.prefix_len = second
    elif kind == "TERNARY":  # (value, mask)
        fm.ternary.value = encode_value(first, bitwidth)
        fm.ternary.mask = encode_value(second, bitwidth)
    else:  # RANGE: (low, high)
        fm.range.low = encode_value(first, bitwidth)
        fm.range.high = encode_value(second, bitwidth)


class _ResponseStream(Protocol):
    """What the client uses of StreamChannel's call (a grpc call that is also an iterator of
    StreamMessageResponse; the generated stub is untyped)."""

    def __iter__(self) -> Iterator[p4runtime_pb2.StreamMessageResponse]: ...

    def cancel(self) -> bool: ...


class P4RuntimeClient:
    """One P4Runtime session (stream channel + unary RPCs) with one device."""

    def __init__(
        self,
        address: str,
        device_id: int,
        p4info: P4Info,
        election_id: tuple[int, int] = (0, 1),
        timeout: float = 10.0,
        tls: TlsSettings | None = None,
    ) -> None:
        self.address = address
        self.tls = tls  # None: plaintext (mpsched/p4rt/tls.py)
        self.device_id = device_id
        self.p4info = p4info
        self.election_id = election_id
        self.timeout = timeout
        self._channel: grpc.Channel | None = None
        self._stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        # None asks the request iterator to end the stream; an Exception is a broken stream
        self._requests: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
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
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                log.warning("P4Runtime stream of device %d ended: %s", self.device_id, error)
                self._responses.put(error)
                self._arbitration.put(error)

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

    def __enter__(self) -> P4RuntimeClient:
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

    def set_pipeline(self, bmv2_json: str, cookie: int | None = None) -> None:
        """Push the P4Info and the BMv2 JSON (VERIFY_AND_COMMIT), with `cookie` if given (see
        `program_cookie`). On BMv2 this wipes every table, register and counter."""
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest()
        request.device_id = self.device_id
        request.election_id.high, request.election_id.low = self.election_id
        request.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        request.config.p4info.CopyFrom(self.p4info.message)
        with open(bmv2_json, "rb") as handle:
            request.config.p4_device_config = handle.read()
        if cookie is not None:
            request.config.cookie.cookie = cookie
        try:
            self.stub.SetForwardingPipelineConfig(request, timeout=self.timeout)
        except grpc.RpcError as error:
            raise P4RuntimeError(f"pipeline push failed: {error.details()}") from None

    def program_cookie(self, bmv2_json: str) -> int:
        """The cookie of this client's P4Info with the program `bmv2_json`."""
        with open(bmv2_json, "rb") as handle:
            # deterministic: type_info holds maps, which the C++ protobuf writes in another
            # order in each process (the cookie must be the same for the same program)
            p4info = self.p4info.message.SerializeToString(deterministic=True)
            return config_cookie(p4info, handle.read())

    def pipeline_cookie(self) -> int | None:
        """The cookie of the program the device runs (GetForwardingPipelineConfig,
        COOKIE_ONLY); None when it runs none, has no cookie, or does not say."""
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest()
        request.device_id = self.device_id
        request.response_type = p4runtime_pb2.GetForwardingPipelineConfigRequest.COOKIE_ONLY
        try:
            response = self.stub.GetForwardingPipelineConfig(request, timeout=self.timeout)
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.UNAVAILABLE:
                raise P4RuntimeError(f"no P4Runtime server at {self.address}") from None
            log.debug("device %d: no pipeline cookie (%s)", self.device_id, error.code().name)
            return None
        if not response.config.HasField("cookie"):
            return None
        return response.config.cookie.cookie

    def read_entries(self, tables: Iterable[str]) -> list[p4runtime_pb2.TableEntry]:
        """Every (non-default) entry of the named tables."""
        return [e for t in tables for e in self.read_table(t) if not e.is_default_action]

    def reconcile(self, tables: Iterable[str], desired: Iterable[TableEntry]) -> Diff:
        """Make the named tables hold exactly `desired`: read them back and write only the
        difference (inserts, modifies, then deletes). Returns what was written."""
        tables = list(tables)
        wanted = [self.build_table_entry(e) for e in desired]
        owned = {self.p4info.table_id(t) for t in tables}
        stray = [w.table_id for w in wanted if w.table_id not in owned]
        if stray:
            raise ValueError(f"desired entries outside the reconciled tables: {sorted(set(stray))}")
        difference = diff(wanted, self.read_entries(tables))
        self.write(difference.updates())
        return difference

    # -- encoding --------------------------------------------------------

    def build_table_entry(self, entry: TableEntry) -> p4runtime_pb2.TableEntry:
        info = self.p4info
        message = p4runtime_pb2.TableEntry()
        message.table_id = info.table_id(entry.table)
        if entry.priority:
            message.priority = entry.priority
        if entry.is_default:
            message.is_default_action = True
        for name, value in entry.match.items():
            mf = info.match_field(entry.table, name)
            fm = message.match.add()
            fm.field_id = mf.id
            kind = p4info_pb2.MatchField.MatchType.Name(mf.match_type)
            _set_field_match(fm, kind, value, mf.bitwidth, f"{entry.table}.{name}")
        if entry.action is not None:
            action = message.action.action
            action.action_id = info.action_id(entry.action)
            given = set(entry.params)
            for param in info.action_params(entry.action):
                if param.name not in entry.params:
                    raise ValueError(f"action {entry.action} needs parameter {param.name!r}")
                given.discard(param.name)
                p = action.params.add()
                p.param_id = param.id
                p.value = encode_value(entry.params[param.name], param.bitwidth)
            if given:
                raise ValueError(f"action {entry.action} has no parameter(s) {sorted(given)}")
        return message

    # -- writes ----------------------------------------------------------

    def write(self, updates: Iterable[tuple[int, p4runtime_pb2.Entity]]) -> None:
        request = p4runtime_pb2.WriteRequest()
        request.device_id = self.device_id
        request.election_id.high, request.election_id.low = self.election_id
        for update_type, entity in updates:
            update = request.updates.add()
            update.type = update_type
            update.entity.CopyFrom(entity)
        if not request.updates:
            return
        try:
            self.stub.Write(request, timeout=self.timeout)
        except grpc.RpcError as error:
            details = _status_details(error)
            raise P4RuntimeError(f"write failed ({error.code().name})", details) from None

    def _table_updates(
        self, kind: int, entries: Iterable[TableEntry]
    ) -> Iterator[tuple[int, p4runtime_pb2.Entity]]:
        for entry in entries:
            entity = p4runtime_pb2.Entity()
            entity.table_entry.CopyFrom(self.build_table_entry(entry))
            yield kind, entity

    def insert(self, *entries: TableEntry) -> None:
        self.write(self._table_updates(p4runtime_pb2.Update.INSERT, entries))

    def modify(self, *entries: TableEntry) -> None:
        self.write(self._table_updates(p4runtime_pb2.Update.MODIFY, entries))

    def replace_entries(self, old: Iterable[TableEntry], new: Iterable[TableEntry]) -> None:
        """Delete `old` and insert `new` in one Write request (in that order)."""
        updates = [
            *self._table_updates(p4runtime_pb2.Update.DELETE, old),
            *self._table_updates(p4runtime_pb2.Update.INSERT, new),
        ]
        if updates:
            self.write(updates)

    def delete(self, *entries: TableEntry) -> None:
        self.write(self._table_updates(p4runtime_pb2.Update.DELETE, entries))

    # -- packet I/O ------------------------------------------------------

    def build_packet_out(
        self, payload: bytes, metadata: dict[str, int]
    ) -> p4runtime_pb2.StreamMessageRequest:
        """A PacketOut stream message; metadata by the names of the P4Info's
        packet_out controller header (every field required)."""
        request = p4runtime_pb2.StreamMessageRequest()
        request.packet.payload = payload
        given = set(metadata)
        for field_ in self.p4info.packet_metadata("packet_out"):
            if field_.name not in metadata:
                raise ValueError(f"packet_out needs metadata {field_.name!r}")
            given.discard(field_.name)
            m = request.packet.metadata.add()
            m.metadata_id = field_.id
            m.value = encode_value(metadata[field_.name], field_.bitwidth)
        if given:
            raise ValueError(f"packet_out has no metadata {sorted(given)}")
        return request

    def packet_out(self, payload: bytes, metadata: dict[str, int]) -> None:
        """Send a packet through the switch's CPU port (P4Runtime PacketOut).

        Only puts the message on the stream's request queue (thread-safe, does
        not wait for the switch), so other threads may call it while the
        session's owner does unary RPCs. Needs a primary session.
        """
        self.send_packet_out(self.build_packet_out(payload, metadata))

    def send_packet_out(self, request: p4runtime_pb2.StreamMessageRequest) -> None:
        """Put a PacketOut built once by `build_packet_out` on the stream (a sender of the
        same packets again and again, like the prober, builds each only once)."""
        if self._stream is None:
            raise P4RuntimeError("packet_out needs a primary session (the stream)")
        self._requests.put(request)

    # -- digests ---------------------------------------------------------

    def insert_digest(
        self,
        digest: str,
        max_timeout_ns: int = 0,
        max_list_size: int = 1,
        ack_timeout_ns: int = 1_000_000_000,
    ) -> None:
        """Enable a digest (DigestEntry INSERT, or MODIFY where the device already has it, as
        after a controller restart on a kept pipeline): its DigestLists then arrive on the
        stream."""
        entity = p4runtime_pb2.Entity()
        entry = entity.digest_entry
        entry.digest_id = self.p4info.digest_id(digest)
        entry.config.max_timeout_ns = max_timeout_ns
        entry.config.max_list_size = max_list_size
        entry.config.ack_timeout_ns = ack_timeout_ns
        try:
            self.write([(p4runtime_pb2.Update.INSERT, entity)])
        except P4RuntimeError as error:
            if not any("ALREADY_EXISTS" in d for d in error.details):
                raise
            self.write([(p4runtime_pb2.Update.MODIFY, entity)])

    def read_digest_list(self, timeout: float) -> p4runtime_pb2.DigestList | None:
        """The next DigestList from the stream (acked), or None after `timeout` seconds.

        Needs a primary session (the stream). Other stream messages are skipped.
        """
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                response = self._responses.get(timeout=remaining)
            except queue.Empty:
                return None
            if isinstance(response, Exception):
                raise P4RuntimeError(f"stream to {self.address} failed: {response}")
            if response.HasField("digest"):
                self.ack_digest_list(response.digest)
                return response.digest
            log.debug("stream message skipped: %s", response.WhichOneof("update"))

    def ack_digest_list(self, digest_list: p4runtime_pb2.DigestList) -> None:
        request = p4runtime_pb2.StreamMessageRequest()
        request.digest_ack.digest_id = digest_list.digest_id
        request.digest_ack.list_id = digest_list.list_id
        self._requests.put(request)

    def decode_digest_list(
        self, digest: str, digest_list: p4runtime_pb2.DigestList
    ) -> list[dict[str, int]]:
        """The struct members of each entry of a DigestList, by name (from the P4Info)."""
        names = [name for name, _ in self.p4info.digest_members(digest)]
        if digest_list.digest_id != self.p4info.digest_id(digest):
            raise P4RuntimeError(f"digest id {digest_list.digest_id} is not {digest}")
        out = []
        for data in digest_list.data:
            members = data.struct.members
            if len(members) != len(names):
                raise P4RuntimeError(f"{digest}: {len(members)} members, expected {len(names)}")
            out.append(
                {name: decode_uint(m.bitstring) for name, m in zip(names, members, strict=True)}
            )
        return out

    # -- reads -----------------------------------------------------------

    def _read(self, entity: p4runtime_pb2.Entity) -> Iterator[p4runtime_pb2.Entity]:
        request = p4runtime_pb2.ReadRequest()
        request.device_id = self.device_id
        request.entities.add().CopyFrom(entity)
        try:
            for response in self.stub.Read(request, timeout=self.timeout):
                yield from response.entities
        except grpc.RpcError as error:
            raise P4RuntimeError(f"read failed ({error.code().name}): {error.details()}") from None

    def read_table(self, table: str) -> list[p4runtime_pb2.TableEntry]:
        entity = p4runtime_pb2.Entity()
        entity.table_entry.table_id = self.p4info.table_id(table)
        return [e.table_entry for e in self._read(entity)]

    def read_direct_counters(self, table: str) -> list[tuple[dict[str, int], CounterValue]]:
        """Each entry of an exact-match table with a direct counter: its match values by
        field name, and its counter's packets and bytes."""
        entity = p4runtime_pb2.Entity()
        entity.table_entry.table_id = self.p4info.table_id(table)
        entity.table_entry.counter_data.SetInParent()
        names = {f.id: f.name for f in self.p4info.match_fields(table)}
        result = []
        for e in self._read(entity):
            entry = e.table_entry
            if entry.is_default_action:
                continue
            match = {names[m.field_id]: decode_uint(m.exact.value) for m in entry.match}
            data = entry.counter_data
            result.append((match, CounterValue(data.packet_count, data.byte_count)))
        return result

    def clear_table(self, table: str) -> int:
        """Delete every (non-default) entry of a table; returns how many."""
        entries = [e for e in self.read_table(table) if not e.is_default_action]
        updates = []
        for entry in entries:
            entity = p4runtime_pb2.Entity()
            entity.table_entry.CopyFrom(entry)
            entity.table_entry.ClearField("action")
            updates.append((p4runtime_pb2.Update.DELETE, entity))
        self.write(updates)
        return len(entries)

    def read_counter(self, counter: str, index: int | None = None) -> dict[int, CounterValue]:
        """Read one cell, or every cell, of an indexed counter."""
        entity = p4runtime_pb2.Entity()
        entity.counter_entry.counter_id = self.p4info.counter_id(counter)
        if index is not None:
            entity.counter_entry.index.index = index
        result: dict[int, CounterValue] = {}
        for e in self._read(entity):
            cell = e.counter_entry
            result[cell.index.index] = CounterValue(cell.data.packet_count, cell.data.byte_count)
        return result


def param_value(entry: p4runtime_pb2.TableEntry, param_id: int) -> int:
    """The value of one action parameter of a read-back table entry."""
    for param in entry.action.action.params:
        if param.param_id == param_id:
            return decode_uint(param.value)
    raise KeyError(param_id)
