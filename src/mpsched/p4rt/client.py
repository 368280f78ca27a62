"""A small, blocking P4Runtime client for one device.

Used by the controller (from native threads, never from eventlet green
threads), the PTF tests and the integration tests. Entities are named as in
the P4Info; values are ints, MAC/IPv4 strings or raw bytes. The session (channel, stream,
arbitration) is session.py's; the messages (entries, PacketOuts, digests) messages.py's.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Iterable, Iterator, Sequence

import grpc
from p4.v1 import p4runtime_pb2

from mpsched.p4rt.messages import (
    CloneSession,
    CounterValue,
    MatchValue,
    P4RuntimeError,
    TableEntry,
    Value,
    clone_session_entity,
    decode_digest,
    encode_value,
    packet_out_message,
    param_value,
    status_details,
    table_entry_message,
)
from mpsched.p4rt.p4info import decode_uint
from mpsched.p4rt.reconcile import Diff, config_cookie, diff
from mpsched.p4rt.session import Session

__all__ = [
    "CloneSession", "CounterValue", "MatchValue", "P4RuntimeClient", "P4RuntimeError",
    "TableEntry", "Value",
    "encode_value", "param_value",
]  # fmt: skip

log = logging.getLogger(__name__)


class P4RuntimeClient(Session):
    """One P4Runtime session (stream channel + unary RPCs) with one device."""


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
        return table_entry_message(self.p4info, entry)

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
            details = status_details(error)
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

    def insert_clone_sessions(self, *sessions: CloneSession) -> None:
        self.write((p4runtime_pb2.Update.INSERT, clone_session_entity(s)) for s in sessions)

    def modify_clone_sessions(self, *sessions: CloneSession) -> None:
        self.write((p4runtime_pb2.Update.MODIFY, clone_session_entity(s)) for s in sessions)

    # -- packet I/O ------------------------------------------------------

    def build_packet_out(
        self, payload: bytes, metadata: dict[str, int]
    ) -> p4runtime_pb2.StreamMessageRequest:
        """A PacketOut stream message; metadata by the names of the P4Info's
        packet_out controller header (every field required)."""
        return packet_out_message(self.p4info, payload, metadata)

    def packet_out(self, payload: bytes, metadata: dict[str, int]) -> None:
        """Send a packet through the switch's CPU port (P4Runtime PacketOut).

        Only puts the message on the stream's request queue (thread-safe, does
        not wait for the switch), so other threads may call it while the
        session's owner does unary RPCs. Needs a primary session. A PacketOut
        beyond the session's backlog limit is dropped and counted
        (`packet_outs`, src/mpsched/p4rt/backlog.py).
        """
        self.send_packet_out(self.build_packet_out(payload, metadata))

    def send_packet_out(self, request: p4runtime_pb2.StreamMessageRequest) -> None:
        """Put a PacketOut built once by `build_packet_out` on the stream (a sender of the
        same packets again and again, like the prober, builds each only once)."""
        if self._stream is None:
            raise P4RuntimeError("packet_out needs a primary session (the stream)")
        if self.packet_outs.admit():
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

        Needs a primary session (the stream). Other stream messages are skipped. A timeout
        of 0 takes only what is already waiting.
        """
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining > 0:
                    response = self._responses.get(timeout=remaining)
                else:
                    response = self._responses.get_nowait()
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
        return decode_digest(self.p4info, digest, digest_list)

    def _read(self, entity: p4runtime_pb2.Entity) -> Iterator[p4runtime_pb2.Entity]:
        request = p4runtime_pb2.ReadRequest()
        request.device_id = self.device_id
        request.entities.add().CopyFrom(entity)
        return self._read_request(request)

    def _read_request(self, request: p4runtime_pb2.ReadRequest) -> Iterator[p4runtime_pb2.Entity]:
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
        return _counter_cells(self._read(entity)).get(entity.counter_entry.counter_id, {})

    def read_counters(self, counters: Sequence[str]) -> dict[str, dict[int, CounterValue]]:
        """Every cell of each of `counters`, in one Read: a Read's own cost (some 170 µs of
        CPU in gRPC's Python binding) is paid once, not once per counter."""
        ids = {self.p4info.counter_id(name): name for name in counters}
        request = p4runtime_pb2.ReadRequest()
        request.device_id = self.device_id
        for counter_id in ids:
            request.entities.add().counter_entry.counter_id = counter_id
        cells = _counter_cells(self._read_request(request))
        return {name: cells.get(counter_id, {}) for counter_id, name in ids.items()}


def _counter_cells(entities: Iterable[p4runtime_pb2.Entity]) -> dict[int, dict[int, CounterValue]]:
    """Counter entities' values by counter id and index."""
    cells: dict[int, dict[int, CounterValue]] = {}
    for e in entities:
        cell = e.counter_entry
        data = cell.data
        cells.setdefault(cell.counter_id, {})[cell.index.index] = CounterValue(
            data.packet_count, data.byte_count)
    return cells
